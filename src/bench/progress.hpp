#pragma once
// Progress of a long run (a benchmark suite): "[i/n] label elapsed 12.3 s ETA 40 s". On a terminal one
// line redrawn with \r; otherwise (logs, CI, pipes) one plain line per finished item, so logs stay
// readable. The JIT precompile has its own bar (tools/tilegemm/cmd_jit.cpp).
#include <cstdio>
#include <functional>
#include <string>

namespace tilegemm::bench_detail {

// "[3/18] 4096x7168x2048 elapsed 12.3 s ETA 40 s". `completed` items took `elapsed_s`; the ETA assumes
// the remaining total − completed items take as long on average ("ETA ?" before the first completes).
std::string progress_line(int index, int total, const std::string& label, double elapsed_s, int completed);

class Progress {
 public:
  // `now_s` (seconds on any monotonic clock) is injectable for tests; the default is steady_clock.
  Progress(int total, std::FILE* out, bool terminal, std::function<double()> now_s = {});

  // Starts the next item: on a terminal, redraws the line with its label.
  void begin(const std::string& label);
  // Finishes the current item: on a terminal, clears the line and prints `detail`; otherwise prints the
  // progress line followed by `detail`.
  void end(const std::string& detail);

  // Whether `stream` is a terminal (isatty on its descriptor).
  static bool is_terminal(std::FILE* stream);

 private:
  double elapsed() const;

  int total_;
  std::FILE* out_;
  bool terminal_;
  std::function<double()> now_s_;
  double start_s_ = 0;
  int completed_ = 0;
  std::string label_;
};

}  // namespace tilegemm::bench_detail
