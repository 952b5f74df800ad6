// The progress display of long runs: the line format and ETA, plain lines off a terminal, one redrawn line
// on a terminal. A fake clock makes the times exact.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "bench/progress.hpp"

using tilegemm::bench_detail::Progress;
using tilegemm::bench_detail::progress_line;

namespace {

// Everything written to a FILE*, via open_memstream.
class Captured {
 public:
  Captured() : file_(open_memstream(&buffer_, &size_)) {}
  ~Captured() {
    if (file_) std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

}  // namespace

TEST(BenchProgress, LineShowsIndexLabelElapsedAndEta) {
  // 3 of 18 done in 12 s: 4 s each, 15 left → 60 s.
  EXPECT_EQ(progress_line(4, 18, "4096x7168x2048", 12.0, 3), "[4/18] 4096x7168x2048 elapsed 12.0 s ETA 60 s");
  EXPECT_EQ(progress_line(1, 18, "64x2112x7168", 0.3, 0), "[1/18] 64x2112x7168 elapsed 0.3 s ETA ?");
  EXPECT_EQ(progress_line(18, 18, "x", 30.0, 18), "[18/18] x elapsed 30.0 s ETA 0 s");
}

TEST(BenchProgress, OffATerminalOnePlainLinePerItem) {
  Captured out;
  double now = 100;
  Progress p(3, out.file(), /*terminal=*/false, [&] { return now; });
  p.begin("64x2112x7168");
  now += 2;
  p.end("bench: ours 19.7 µs");
  p.begin("128x2112x7168");
  now += 4;
  p.end("");
  EXPECT_EQ(out.text(),
            "[1/3] 64x2112x7168 elapsed 2.0 s ETA 4 s  bench: ours 19.7 µs\n"
            "[2/3] 128x2112x7168 elapsed 6.0 s ETA 3 s\n");
}

TEST(BenchProgress, OnATerminalOneRedrawnLineAndTheResultsBetween) {
  Captured out;
  double now = 0;
  Progress p(2, out.file(), /*terminal=*/true, [&] { return now; });
  p.begin("a");
  now += 10;
  p.end("result a");
  p.begin("b");
  EXPECT_EQ(out.text(),
            "\r\033[K[1/2] a elapsed 0.0 s ETA ?"
            "\r\033[Kresult a\n"
            "\r\033[K[2/2] b elapsed 10.0 s ETA 10 s");
}

TEST(BenchProgress, AFileIsNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(Progress::is_terminal(f));
  std::fclose(f);
}
