// `--report DIR`: report.json, report.md and the roofline plot. The plot is drawn by scripts/roofline.py
// with matplotlib (a well-kept plotting library, not drawing code of ours); without python3 or
// matplotlib the JSON and Markdown are still written and the caller prints why the plot was skipped.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "bench/shell.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm {

namespace fs = std::filesystem;
using bench_detail::run_shell;
using bench_detail::run_shell_capture;
using bench_detail::shell_quote;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

// The last non-blank line of a tool's output: where python and the script put the reason they stopped.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

void write_text(const fs::path& path, const std::string& text, const std::string& argument) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidArgument(argument, "a writable directory", fmt::format("'{}'", path.parent_path().string()));
  out << text;
  if (!out.flush()) throw RuntimeError(fmt::format("{}: writing '{}' failed", argument, path.string()));
}

bool non_empty_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && fs::file_size(path, ec) > 0;
}

}  // namespace

std::string plot_python() {
  if (const std::string set = env_or("TILEGEMM_PYTHON", ""); !set.empty()) return set;
  // scripts/install-deps installs Debian's python3-matplotlib, which /usr/bin/python3 imports; the first python3 on
  // PATH may be another one (a virtual environment, pyenv) without it.
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (run_shell(fmt::format("{} -c 'import matplotlib' 2>/dev/null", shell_quote(python)))) return python;
  return "python3";
}

std::string roofline_script_path() {
  return env_or("TILEGEMM_ROOFLINE_SCRIPT", std::string(TILEGEMM_SOURCE_DIR) + "/scripts/roofline.py");
}

std::string plot_roofline(const std::string& report_json_path, const std::string& out_dir) {
  const std::string python = plot_python();
  if (!run_shell("command -v " + shell_quote(python)))
    return fmt::format("python interpreter '{}' not found (set TILEGEMM_PYTHON to one with matplotlib)", python);
  // (A python3 without matplotlib: roofline.py exits 3 saying which interpreter lacked it, reported below.)
  const std::string script = roofline_script_path();
  if (!fs::is_regular_file(script)) return fmt::format("plot script '{}' not found", script);
  const auto run = run_shell_capture(fmt::format("{} {} {} {}", shell_quote(python), shell_quote(script),
                                                 shell_quote(report_json_path), shell_quote(out_dir)));
  if (run.status != 0) {
    const std::string why = last_line(run.output);
    return fmt::format("{} exited with status {}{}", fs::path(script).filename().string(), run.status,
                       why.empty() ? "" : ": " + why);
  }
  for (const char* name : {"roofline.png", "roofline.svg"})
    if (!non_empty_file(fs::path(out_dir) / name))
      return fmt::format("{} ran but wrote no {}", fs::path(script).filename().string(), name);
  return "";
}

ReportFiles write_report_dir(const BenchReport& report, const std::string& dir, const std::string& argument) {
  TILEGEMM_REQUIRE(!dir.empty(), argument, "a directory path", "''");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InvalidArgument(argument, "a directory that exists or can be created",
                          fmt::format("'{}'{}", dir, ec ? " (" + ec.message() + ")" : ""));
  const fs::path root(dir);
  ReportFiles files;
  files.json_path = (root / "report.json").string();
  files.md_path = (root / "report.md").string();
  write_text(files.json_path, report_to_json(report), argument);

  // A plot left from an earlier run in the same directory must not pass for this report's.
  for (const char* name : {"roofline.png", "roofline.svg"}) fs::remove(root / name, ec);
  files.plot_skipped = plot_roofline(files.json_path, dir);
  files.plotted = files.plot_skipped.empty();
  std::string markdown = report_to_markdown(report);
  if (files.plotted) {
    files.png_path = (root / "roofline.png").string();
    files.svg_path = (root / "roofline.svg").string();
    markdown += "\n![Roofline: ours and the baseline per shape](roofline.png)\n";
  }
  write_text(files.md_path, markdown, argument);
  return files;
}

}  // namespace tilegemm
