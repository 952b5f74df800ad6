#include "bench/progress.hpp"

#include <unistd.h>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

namespace tilegemm::bench_detail {

std::string progress_line(int index, int total, const std::string& label, double elapsed_s, int completed) {
  std::string eta = "?";
  if (completed > 0) eta = fmt::format("{:.0f} s", elapsed_s / completed * std::max(0, total - completed));
  return fmt::format("[{}/{}] {} elapsed {:.1f} s ETA {}", index, total, label, elapsed_s, eta);
}

Progress::Progress(int total, std::FILE* out, bool terminal, std::function<double()> now_s)
    : total_(total), out_(out), terminal_(terminal), now_s_(std::move(now_s)) {
  if (!now_s_)
    now_s_ = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  start_s_ = now_s_();
}

double Progress::elapsed() const {
  return now_s_() - start_s_;
}

bool Progress::is_terminal(std::FILE* stream) {
  return ::isatty(::fileno(stream)) == 1;
}

void Progress::begin(const std::string& label) {
  label_ = label;
  if (!terminal_) return;
  // \033[K clears what a longer previous line left behind.
  fmt::print(out_, "\r\033[K{}", progress_line(completed_ + 1, total_, label_, elapsed(), completed_));
  std::fflush(out_);
}

void Progress::end(const std::string& detail) {
  ++completed_;
  if (terminal_)
    fmt::print(out_, "\r\033[K{}\n", detail);
  else
    fmt::print(out_, "{}{}\n", progress_line(completed_, total_, label_, elapsed(), completed_),
               detail.empty() ? "" : "  " + detail);
  std::fflush(out_);
}

}  // namespace tilegemm::bench_detail
