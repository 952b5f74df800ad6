// Seeded fuzzing of the real `tilegemm` binary (TILEGEMM_CLI_PATH), issue #31 item 3: valid ledger / plan / bench
// --compare command lines and JSON inputs (--hw-json files, bench reports), mutated, and for every case:
//   - the process ends within kTimeLimitMs and is not killed by a signal;
//   - no uncaught-exception text (terminate called, what():, [json.exception, ...) on stdout or stderr;
//   - the exit status is 0 or 2 (these commands need no GPU, so 1 would be a std::exception leaking to main);
//     an unmutated base case must exit 0;
//   - exit 2 comes with exactly one line on stderr, "tilegemm: error: ...", naming an option ("--m", "--hw-json")
//     or one of the arguments given, and nothing on stdout.
// The seed is fixed (kDefaultSeed) unless TILEGEMM_FUZZ_SEED is set; TILEGEMM_FUZZ_SCALE multiplies the case
// counts. Every failure prints the seed, the case index and the argument list, ready to paste into a shell.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

constexpr std::uint64_t kDefaultSeed = 0x7115e6e3;
// A run takes ~0.1 s (loading the CUDA libraries dominates); 6 s leaves room for a loaded CI machine.
constexpr int kTimeLimitMs = 6000;

std::uint64_t fuzz_seed() {
  const char* s = std::getenv("TILEGEMM_FUZZ_SEED");
  return s && *s ? std::strtoull(s, nullptr, 0) : kDefaultSeed;
}

int scaled(int cases) {
  const char* s = std::getenv("TILEGEMM_FUZZ_SCALE");
  const double f = s && *s ? std::atof(s) : 1.0;
  return std::max(1, static_cast<int>(cases * (f > 0 ? f : 1.0)));
}

struct RunResult {
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out, err;
  double ms = 0;
};

// fork + execv of the binary with exactly these arguments (no shell: empty strings, quotes and bytes >= 0x80
// reach it as they are), stdout and stderr read through pipes, killed at the time limit.
RunResult run_tilegemm(const std::vector<std::string>& args) {
  RunResult r;
  const auto start = std::chrono::steady_clock::now();
  int out_pipe[2], err_pipe[2];
  // O_CLOEXEC: a child forked by another worker thread must not hold these pipes open.
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.err = "pipe() failed";
    return r;
  }
  std::vector<std::string> storage = {TILEGEMM_CLI_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  // posix_spawn (vfork underneath): fork would copy the page tables of this test process, which has the CUDA
  // libraries loaded too, for every case.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
    r.err = std::string("posix_spawn failed: ") + std::strerror(spawned);
    return r;
  }
  close(out_pipe[1]), close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  const auto deadline = start + std::chrono::milliseconds(kTimeLimitMs);
  char buf[65536];
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0 && sinks[i]->size() < (std::size_t{4} << 20)) sinks[i]->append(buf, static_cast<std::size_t>(n));
      if (n <= 0) close(fds[i].fd), fds[i].fd = -1, --open_fds;
    }
  }
  int status = 0;
  if (r.timed_out) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  } else {
    // Both pipes closed; the process is exiting (or closed them itself: wait for it up to the deadline).
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        r.timed_out = true;
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      usleep(1000);
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// The argument list as a shell line: every argument single-quoted, bytes that are not printable ASCII as \xNN.
std::string shell_line(const std::vector<std::string>& args) {
  std::string line = "tilegemm";
  for (const std::string& a : args) {
    line += " '";
    for (unsigned char c : a) {
      if (c == '\'')
        line += "'\\''";
      else if (c < 0x20 || c >= 0x7f)
        line += fmt::format("\\x{:02x}", c);
      else
        line += static_cast<char>(c);
    }
    line += "'";
  }
  return line;
}

enum class Expect { kValid, kAny };

struct Case {
  std::vector<std::string> args;
  Expect expect = Expect::kAny;
  std::string note;      // what was mutated, for the failure message
  bool lenient = false;  // other commands: exit 1 (no GPU) allowed, stdout not checked
  // When set, written to a file of the worker that runs the case; every argument "@FILE@" is replaced by its path.
  std::optional<std::string> file_text;
};

constexpr const char* kFileArg = "@FILE@";

std::string head(const std::string& s, std::size_t n = 600) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

// Does `line` name an option ("--m"), the command, or one of the arguments as given, quoted ('0')?
bool names_an_argument(const std::string& line, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 2 < line.size(); ++i)
    if (line[i] == '-' && line[i + 1] == '-' && std::isalpha(static_cast<unsigned char>(line[i + 2]))) return true;
  if (line.rfind("tilegemm: error: command: ", 0) == 0) return true;
  for (const std::string& a : args)
    if (line.find("'" + a + "'") != std::string::npos) return true;
  return false;
}

// Every invariant of one case; returns false (and reports) on the first broken one.
// Runs one case (its file, if any, written to `file`) and returns "" or what went wrong.
std::string check_case(Case c, std::uint64_t seed, const std::string& suite, int index, const std::string& file) {
  if (c.file_text) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << *c.file_text;
    for (std::string& a : c.args)
      if (a == kFileArg) a = file;
    c.note += " [file: " + head(*c.file_text, 300) + "]";
  }
  const RunResult r = run_tilegemm(c.args);
  const std::string where = fmt::format("seed {} ({}, case {}{}): {}\n  TILEGEMM_FUZZ_SEED={} reproduces it\n", seed,
                                        suite, index, c.note.empty() ? "" : ", " + c.note, shell_line(c.args), seed);
  const std::string got = fmt::format("  exit {} signal {}{} after {:.0f} ms\n  stderr: {}\n  stdout: {}", r.exit_code,
                                      r.signal, r.timed_out ? " TIMED OUT" : "", r.ms, head(r.err), head(r.out));
  auto fail = [&](const std::string& why) { return why + "\n" + where + got; };
  if (r.timed_out) return fail(fmt::format("did not end within {} ms", kTimeLimitMs));
  if (r.signal != 0) return fail("killed by a signal (crash or abort)");
  for (const char* marker : {"terminate called", "what():", "[json.exception", "Aborted", "Segmentation fault",
                             "stack smashing", "AddressSanitizer", "runtime error:"})
    if (r.err.find(marker) != std::string::npos || r.out.find(marker) != std::string::npos)
      return fail(fmt::format("uncaught-exception or crash text '{}'", marker));
  if (c.expect == Expect::kValid && r.exit_code != 0) return fail("a valid command line did not exit 0");
  if (r.exit_code != 0 && r.exit_code != 2 && !(c.lenient && r.exit_code == 1))
    return fail("exit status is neither 0 nor 2 (1 = an exception that is no InvalidArgument reached main)");
  if (r.exit_code == 2) {
    if (r.err.empty() || r.err.find('\n') != r.err.size() - 1) return fail("exit 2 without exactly one stderr line");
    if (r.err.rfind("tilegemm: error: ", 0) != 0)
      return fail("exit 2 whose message does not start 'tilegemm: error: '");
    if (!names_an_argument(r.err, c.args)) return fail("exit 2 whose message names no option or argument");
    if (!r.out.empty() && !c.lenient) return fail("exit 2 with output on stdout");
  }
  return "";
}

// ---- generators --------------------------------------------------------------------------------------------

using Rng = std::mt19937_64;

template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}
int below(Rng& rng, int n) {
  return std::uniform_int_distribution<int>(0, n - 1)(rng);
}
bool chance(Rng& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}

const std::vector<std::string>& odd_values() {
  static const std::vector<std::string> v = {"2147483648",
                                             "2147483647",
                                             "-2147483648",
                                             "-2147483649",
                                             "4294967296",
                                             "4294967295",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "-9223372036854775808",
                                             "-9223372036854775809",
                                             "18446744073709551615",
                                             "18446744073709551616",
                                             "99999999999999999999",
                                             "-99999999999999999999",
                                             "0",
                                             "-0",
                                             "-1",
                                             "1",
                                             "7",
                                             "8",
                                             "63",
                                             "64",
                                             "65",
                                             "127",
                                             "128",
                                             "131",
                                             "132",
                                             "133",
                                             "255",
                                             "256",
                                             "4096",
                                             "1.5",
                                             "64.0",
                                             "-1.5",
                                             "1e3",
                                             "1e400",
                                             "-1e400",
                                             "1e-400",
                                             "nan",
                                             "NaN",
                                             "inf",
                                             "-inf",
                                             "infinity",
                                             "0x40",
                                             "0X40",
                                             "0x",
                                             "010",
                                             "0o10",
                                             "0b101",
                                             "+64",
                                             "64 ",
                                             " 64",
                                             "6 4",
                                             "64abc",
                                             "abc",
                                             "",
                                             " ",
                                             "\t",
                                             "\xef\xbc\x96\xef\xbc\x94" /* fullwidth 64 */,
                                             "\xc3\xa9",
                                             "\xf0\x9f\x92\xa5",
                                             "\xff\xfe",
                                             "128x",
                                             "x128x64",
                                             "0x0x0",
                                             "128x128x64",
                                             "128x128x64x1",
                                             "1x128",
                                             "128x128",
                                             "1x0",
                                             "0x128",
                                             "-128x128x64",
                                             "128x-128x64",
                                             "128xx64",
                                             "x",
                                             "xx",
                                             "99999999999x1x1",
                                             "2147483648x1x1",
                                             "1x99999999999",
                                             "64X64X64",
                                             "bf16",
                                             "fp8",
                                             "e4m3",
                                             "e5m2",
                                             "fp16",
                                             "fp32",
                                             "tf32",
                                             "int8",
                                             "int4",
                                             "fp4",
                                             "BF16",
                                             "bfloat16",
                                             "fp64",
                                             "nt",
                                             "nn",
                                             "tn",
                                             "tt",
                                             "NT",
                                             "n",
                                             "ntn",
                                             "kn",
                                             "h200",
                                             "h100-sxm",
                                             "h800",
                                             "h20",
                                             "ascend-950dt",
                                             "device",
                                             "H200",
                                             "b200",
                                             "deepseek",
                                             "decode",
                                             "grouped",
                                             "masked",
                                             "all",
                                             "normal",
                                             "batched",
                                             "m_grouped_contiguous",
                                             "m_grouped_masked",
                                             "k_grouped_contiguous",
                                             "--m",
                                             "--help",
                                             "-h",
                                             "-",
                                             "--",
                                             "---",
                                             "-1e5",
                                             "true",
                                             "false",
                                             "[1]",
                                             "{}",
                                             "%s%s%n",
                                             "{}{}",
                                             "\\",
                                             "'",
                                             "\"",
                                             "/dev/zero",
                                             "/",
                                             ".",
                                             std::string(5000, '9'),
                                             std::string(3000, 'x'),
                                             std::string(200, '-')};
  return v;
}

const std::vector<std::string>& odd_options() {
  static const std::vector<std::string> v = {"--bogus", "--M",       "--m=",        "---m",
                                             "-m",      "--",        "-",           "-x",
                                             "--=",     "--json=1",  "--grouped=2", "--with-c=yes",
                                             "--help",  "--tile=",   "extra",       "ledger",
                                             "plan",    "--hw-json", "--compare",   "--from-json"};
  return v;
}

bool is_option(const std::string& s) {
  return s.size() > 1 && s[0] == '-' && !std::isdigit((unsigned char)s[1]);
}

// 1 to 3 mutations of a base argument list (args[0] is the command and stays).
Case mutate_args(Rng& rng, const std::vector<std::string>& base) {
  Case c{base, Expect::kAny, ""};
  std::vector<std::string>& a = c.args;
  const int count = 1 + below(rng, 3);
  for (int m = 0; m < count; ++m) {
    std::vector<std::size_t> values, options;
    for (std::size_t i = 1; i < a.size(); ++i) (is_option(a[i]) ? options : values).push_back(i);
    switch (below(rng, 9)) {
      case 0:
      case 1:
      case 2:  // replace a value
        if (!values.empty()) {
          a[pick(rng, values)] = pick(rng, odd_values());
          c.note += "value;";
        }
        break;
      case 3:  // drop a value (the option is left without one)
        if (!values.empty()) {
          a.erase(a.begin() + static_cast<long>(pick(rng, values)));
          c.note += "missing value;";
        }
        break;
      case 4:  // unknown or odd option somewhere
        a.insert(a.begin() + 1 + below(rng, static_cast<int>(a.size())), pick(rng, odd_options()));
        c.note += "odd option;";
        break;
      case 5:  // duplicate an option with its value
        if (!options.empty()) {
          const std::size_t i = pick(rng, options);
          std::vector<std::string> dup = {a[i]};
          if (i + 1 < a.size() && !is_option(a[i + 1]))
            dup.push_back(chance(rng, 0.5) ? a[i + 1] : pick(rng, odd_values()));
          a.insert(a.end(), dup.begin(), dup.end());
          c.note += "duplicate;";
        }
        break;
      case 6:  // --opt=value form
        if (!values.empty()) {
          const std::size_t i = pick(rng, values);
          if (is_option(a[i - 1])) {
            a[i - 1] += "=" + (chance(rng, 0.5) ? a[i] : pick(rng, odd_values()));
            a.erase(a.begin() + static_cast<long>(i));
            c.note += "equals;";
          }
        }
        break;
      case 7:  // a stray value
        a.insert(a.begin() + 1 + below(rng, static_cast<int>(a.size())), pick(rng, odd_values()));
        c.note += "stray value;";
        break;
      case 8:  // drop an option and its value
        if (!options.empty()) {
          const std::size_t i = pick(rng, options);
          const bool with_value = i + 1 < a.size() && !is_option(a[i + 1]);
          a.erase(a.begin() + static_cast<long>(i), a.begin() + static_cast<long>(i + (with_value ? 2 : 1)));
          c.note += "dropped option;";
        }
        break;
    }
  }
  if (a == base) c.expect = Expect::kValid;
  return c;
}

std::string temp_dir() {
  static const std::string dir = [] {
    std::string d = (testing::TempDir().empty() ? std::string("/tmp/") : testing::TempDir()) + "tilegemm_cli_fuzz_" +
                    std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

std::string fixture(const std::string& name) {
  return std::string(TILEGEMM_SOURCE_DIR) + "/tests/cpp/fixtures/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A JSON value of a random odd kind, as text (some of it not JSON that nlohmann would write).
std::string odd_json_value(Rng& rng) {
  static const std::vector<std::string> v = {"1e400",
                                             "-1e400",
                                             "1e-400",
                                             "0",
                                             "-0",
                                             "-1",
                                             "0.5",
                                             "2147483648",
                                             "4294967296",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "18446744073709551616",
                                             "99999999999999999999",
                                             "-99999999999999999999",
                                             "1.7976931348623157e308",
                                             "\"\"",
                                             "\"64\"",
                                             "\"\\u0000\"",
                                             "\"\xff\"",
                                             "\"\\ud800\"",
                                             "true",
                                             "false",
                                             "null",
                                             "[]",
                                             "[1,2]",
                                             "{}",
                                             "{\"a\":{\"b\":{\"c\":[]}}}",
                                             "[[[[[[[[[[]]]]]]]]]]",
                                             "NaN",
                                             "Infinity",
                                             "0x10",
                                             "01",
                                             "+1",
                                             ".5",
                                             "1.",
                                             "-",
                                             "\"h200\"",
                                             "\"" + std::string(10000, 'a') + "\""};
  return pick(rng, v);
}

// Mutates the JSON document `doc` (its text): a value replaced, a key removed or added, or the text cut or
// garbled. `paths` are JSON pointers into it.
std::string mutate_json_text(Rng& rng, const nlohmann::json& doc, const std::vector<std::string>& paths,
                             std::string& note) {
  switch (below(rng, 10)) {
    case 0: {  // truncated
      const std::string text = doc.dump(chance(rng, 0.5) ? 2 : -1);
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng);
      note = fmt::format("truncated at {}", at);
      return text.substr(0, at);
    }
    case 1: {  // one byte changed
      std::string text = doc.dump(-1);
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng);
      text[at] = pick(rng, std::vector<char>{'{', '}', '[', ']', '"', ',', ':', '\\', '\0', '\xff', 'x', '9'});
      note = fmt::format("byte {} changed", at);
      return text;
    }
    case 2: {  // whole-document oddities
      static const std::vector<std::string> whole = {"",
                                                     " ",
                                                     "\n",
                                                     "null",
                                                     "0",
                                                     "[]",
                                                     "{}",
                                                     "\"text\"",
                                                     "[{}]",
                                                     "\xef\xbb\xbf{}",
                                                     "{\"a\":1,}",
                                                     "{'a':1}",
                                                     "not json",
                                                     std::string(100000, '['),
                                                     std::string(100000, '{'),
                                                     "{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}"};
      const std::size_t i = std::uniform_int_distribution<std::size_t>(0, whole.size() - 1)(rng);
      note = fmt::format("whole document #{}", i);
      return whole[i];
    }
    case 3: {  // a key removed
      nlohmann::json d = doc;
      const std::string path = pick(rng, paths);
      const nlohmann::json::json_pointer p(path);
      if (!p.empty()) {
        nlohmann::json& parent = d.at(p.parent_pointer());
        if (parent.is_object())
          parent.erase(p.back());
        else if (parent.is_array() && !parent.empty())
          parent.erase(parent.size() - 1);
      }
      note = "removed " + path;
      return d.dump(2);
    }
    case 4: {  // a key added
      nlohmann::json d = doc;
      const std::string path = pick(rng, paths);
      nlohmann::json& at = d.at(nlohmann::json::json_pointer(path));
      if (at.is_object()) at["fuzz_extra"] = 1;
      note = "added a key at " + path;
      return d.dump(2);
    }
    default: {  // a value replaced, as text
      nlohmann::json d = doc;
      const std::string path = pick(rng, paths);
      const std::string marker = "\"@@FUZZ@@\"";
      d.at(nlohmann::json::json_pointer(path)) = "@@FUZZ@@";
      std::string text = d.dump(2);
      const std::string value = odd_json_value(rng);
      text.replace(text.find(marker), marker.size(), value);
      note = fmt::format("{} = {}", path, head(value, 40));
      return text;
    }
  }
}

void collect_paths(const nlohmann::json& j, const std::string& at, std::vector<std::string>& out) {
  out.push_back(at);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) collect_paths(*it, at + "/" + it.key(), out);
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) collect_paths(j[i], at + "/" + std::to_string(i), out);
}

// Makes `cases` cases from `make` (in order, from the seed), then runs them on as many workers as there are
// cores (each process is mostly CPU: loading the CUDA libraries); reports at most a handful of failures, since
// one bug tends to fail many cases.
template <class Make>
void fuzz(const std::string& suite, std::uint64_t salt, int cases, Make make) {
  const std::uint64_t seed = fuzz_seed();
  Rng rng(seed ^ (salt * 0x9e3779b97f4a7c15ull));
  std::vector<Case> all;
  for (int i = 0; i < cases; ++i) all.push_back(make(rng, i));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> failures(all.size());
  std::atomic<std::size_t> next{0};
  std::atomic<int> failed{0};
  const unsigned workers = std::max(2u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      const std::string file = temp_dir() + "/" + suite + "_" + std::to_string(w) + ".json";
      for (std::size_t i; (i = next++) < all.size() && failed < 5;) {
        failures[i] = check_case(all[i], seed, suite, static_cast<int>(i), file);
        if (!failures[i].empty()) ++failed;
      }
    });
  for (std::thread& t : pool) t.join();
  for (const std::string& f : failures)
    if (!f.empty()) ADD_FAILURE() << f;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[fuzz] %s: %zu cases, seed %llu, %u workers, %.1f s\n", suite.c_str(), all.size(),
              static_cast<unsigned long long>(seed), workers, s);
}

// ---- ledger and plan command lines ----------------------------------------------------------------------

const std::vector<std::vector<std::string>>& ledger_bases() {
  static const std::vector<std::vector<std::string>> v = {
      {"ledger", "--m", "64", "--n", "64", "--k", "64"},
      {"ledger", "--op", "paged_mqa_logits", "--batch", "64", "--context", "4096", "--heads", "32"},
      {"ledger", "--m", "4096", "--n", "7168", "--k", "2048", "--dtype", "fp8", "--sf-a", "1x128", "--sf-b", "128x128",
       "--tile", "128x128x128", "--stages", "4", "--json"},
      {"ledger", "--suite", "decode", "--hw", "h100-sxm"},
      {"ledger", "--m", "128", "--n", "4096", "--k", "7168", "--grouped", "--batch", "8", "--time-us", "12.5"},
      {"ledger", "--m", "1", "--n", "2112", "--k", "7168", "--with-c", "--out-dtype", "fp32", "--hbm-gbps", "4000",
       "--num-sms", "100", "--sm-clock-mhz", "1500"},
      {"ledger", "--m",       "256", "--n",           "256", "--k",       "512", "--block-m",
       "64",     "--block-n", "128", "--block-k",     "64",  "--threads", "256", "--split-k",
       "2",      "--regs",    "128", "--extra-bytes", "1024"},
      {"ledger", "--m", "512", "--n", "512", "--k", "512", "--a-dtype", "fp8", "--b-dtype", "bf16", "--math-dtype",
       "bf16", "--c-dtype", "fp32", "--sf-bits", "8", "--sf-a", "1x128"},
      {"ledger", "--m", "1024", "--n", "1024", "--k", "1024", "--hw", "ascend-950dt", "--tile", "128x128x64", "--l0-k",
       "32"},
  };
  return v;
}

const std::vector<std::vector<std::string>>& plan_bases() {
  static const std::vector<std::vector<std::string>> v = {
      {"plan", "--m", "64", "--n", "2112", "--k", "7168"},
      {"plan", "--m", "128", "--n", "4096", "--k", "7168", "--dtype", "fp8", "--out-dtype", "bf16", "--layout", "nt",
       "--top", "3", "--json"},
      {"plan", "--m", "64", "--n", "4096", "--k", "7168", "--gemm-type", "m_grouped_contiguous", "--num-groups", "4"},
      {"plan", "--m", "64", "--n", "4096", "--k", "7168", "--gemm-type", "m_grouped_masked", "--num-groups", "4",
       "--expected-m", "32"},
      {"plan", "--m", "256", "--n", "256", "--k", "256", "--layout", "tn", "--num-sms", "66", "--with-c", "--hw",
       "h800"},
      {"plan", "--m", "32", "--n", "1024", "--k", "512", "--gemm-type", "batched", "--num-groups", "2", "--out-dtype",
       "fp32"},
      {"plan", "--op", "mqa_logits", "--m", "2048", "--n", "8192", "--heads", "32", "--window", "full"},
      {"plan", "--op", "paged_mqa_logits", "--batch", "256", "--context", "8192", "--next-n", "2", "--json"},
  };
  return v;
}

Case arg_case(Rng& rng, int i, const std::vector<std::vector<std::string>>& bases) {
  const auto& base = bases[static_cast<std::size_t>(i) % bases.size()];
  if (i < static_cast<int>(bases.size())) return Case{base, Expect::kValid, "base"};  // every base once, unmutated
  return mutate_args(rng, base);
}

TEST(CliFuzz, LedgerArgumentsA) {
  fuzz("ledger-args-a", 1, scaled(650), [](Rng& rng, int i) { return arg_case(rng, i, ledger_bases()); });
}
TEST(CliFuzz, LedgerArgumentsB) {
  fuzz("ledger-args-b", 2, scaled(650), [](Rng& rng, int i) { return arg_case(rng, i, ledger_bases()); });
}
TEST(CliFuzz, PlanArgumentsA) {
  fuzz("plan-args-a", 3, scaled(550), [](Rng& rng, int i) { return arg_case(rng, i, plan_bases()); });
}
TEST(CliFuzz, PlanArgumentsB) {
  fuzz("plan-args-b", 4, scaled(550), [](Rng& rng, int i) { return arg_case(rng, i, plan_bases()); });
}

// Other commands and the top level: only that nothing crashes and usage errors are one line. bench, jit and
// ladder measure or compile on a GPU, so they are given only argument lists that fail before that (or exit 1
// for the missing GPU, which is allowed here).
TEST(CliFuzz, TopLevelAndOtherCommands) {
  static const std::vector<std::vector<std::string>> bases = {
      {"ledger", "--m", "64", "--n", "64", "--k", "64"},
      {"bench", "--m", "64", "--n", "2112", "--k", "7168", "--dtype", "fp8", "--layout", "nt", "--timer", "cuda-graph",
       "--flush", "read", "--sf-layout", "row-major"},
      {"jit", "precompile", "--m", "64", "--n", "2112", "--k", "7168", "-j", "2"},
      {"ladder", "--m", "64", "--n", "64", "--k", "64"},
  };
  fuzz("top-level", 8, scaled(500), [](Rng& rng, int i) {
    Case c;
    if (i % 5 == 0) {  // a random word list
      const int n = below(rng, 4);
      for (int w = 0; w < n; ++w)
        c.args.push_back(chance(rng, 0.5) ? pick(rng, odd_options()) : pick(rng, odd_values()));
      c.note = "random words";
    } else {
      c = mutate_args(rng, bases[static_cast<std::size_t>(i) % bases.size()]);
    }
    c.expect = Expect::kAny;
    c.lenient = true;
    return c;
  });
}

// ---- --hw-json files ---------------------------------------------------------------------------------------

TEST(CliFuzz, HardwareJsonFiles) {
  const nlohmann::json valid = {{"name", "fuzz-h200"},           {"num_sms", 132},
                                {"sm_clock_mhz", 1830.0},        {"hbm_gbps", 4272.0},
                                {"l2_bytes", 62914560.0},        {"smem_per_block_bytes", 232448},
                                {"flop_per_cycle_bf16", 4096.0}, {"max_threads_per_sm", 2048},
                                {"regs_per_sm", 65536}};
  std::vector<std::string> paths;
  collect_paths(valid, "", paths);
  const std::string dir = temp_dir();
  const std::string dir_arg = dir + "/a_directory";
  std::filesystem::create_directories(dir_arg);
  static const std::vector<std::vector<std::string>> commands = {
      {"ledger", "--m", "64", "--n", "64", "--k", "64", "--hw-json"},
      {"ledger", "--m", "4096", "--n", "4096", "--k", "4096", "--tile", "128x128x64", "--stages", "3", "--json",
       "--hw-json"},
      {"ledger", "--suite", "deepseek", "--hw-json"},
  };
  fuzz("hw-json", 5, scaled(1100), [&](Rng& rng, int i) {
    Case c{commands[static_cast<std::size_t>(i) % commands.size()], Expect::kAny, ""};
    if (i < static_cast<int>(commands.size())) {
      c.file_text = valid.dump(2);
      c.args.push_back(kFileArg);
      c.expect = Expect::kValid;
      c.note = "valid";
    } else if (i % 25 == 3) {
      c.args.push_back(pick(rng, std::vector<std::string>{dir_arg, "/dev/zero", "/dev/null", "/dev/stdin",
                                                          dir + "/missing.json", "", "/", "/proc/self/status"}));
      c.note = "not a JSON file";
    } else {
      c.file_text = mutate_json_text(rng, valid, paths, c.note);
      c.args.push_back(kFileArg);
    }
    return c;
  });
}

// ---- bench --compare / --from-json on report files ---------------------------------------------------------

void fuzz_reports(const std::string& suite, std::uint64_t salt, int cases) {
  const std::string run3 = fixture("bench-bf16-all-run3.json"), run4 = fixture("bench-bf16-all-run4.json");
  const nlohmann::json doc = nlohmann::json::parse(slurp(run3));
  std::vector<std::string> paths;
  collect_paths(doc, "", paths);
  const std::string file = kFileArg;
  fuzz(suite, salt, cases, [&](Rng& rng, int i) {
    Case c;
    if (i == 0) return Case{{"bench", "--compare", run3, run4}, Expect::kValid, "fixtures"};
    if (i == 1) return Case{{"bench", "--from-json", run4}, Expect::kValid, "fixture"};
    c.file_text = mutate_json_text(rng, doc, paths, c.note);
    switch (below(rng, 3)) {
      case 0:
        c.args = {"bench", "--compare", file, run4};
        break;
      case 1:
        c.args = {"bench", "--compare", run3, file};
        break;
      default:
        c.args = {"bench", "--from-json", file};
        break;
    }
    return c;
  });
}

TEST(CliFuzz, BenchReportFilesA) {
  fuzz_reports("bench-reports-a", 6, scaled(500));
}
TEST(CliFuzz, BenchReportFilesB) {
  fuzz_reports("bench-reports-b", 7, scaled(500));
}

// ---- regression tests for what the fuzzer found ---------------------------------------------------------------

// Exit 2, exactly one stderr line starting with `prefix`, containing every one of `fragments`, nothing on stdout.
void expect_usage_error(const std::vector<std::string>& args, const std::string& prefix,
                        const std::vector<std::string>& fragments) {
  SCOPED_TRACE(shell_line(args));
  const RunResult r = run_tilegemm(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("tilegemm: error: " + prefix, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  for (const std::string& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << f << " in " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// CLI11 gives an option that needs a value the next argument even when it is another option: "--suite --hw 0"
// took '--hw' as the suite and then refused '0' with "The following argument was not expected: 0".
TEST(CliFuzzRegression, AnOptionIsNeverTakenAsTheValueOfAnother) {
  expect_usage_error({"ledger", "--suite", "--hw", "0"}, "--suite: expected a value, got the option '--hw'", {});
  expect_usage_error({"plan", "--m", "64", "--n", "4096", "--k", "7168", "--gemm-type", "--num-groups", "4"},
                     "--gemm-type: expected a value, got the option '--num-groups'", {});
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "--hw-json", "--json"},
                     "--hw-json: expected a value, got the option '--json'", {});
  expect_usage_error({"ledger", "--m", "--n", "64", "--k", "64"}, "--m: expected a value, got the option '--n'", {});
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "--time-us", "--json"},
                     "--time-us: expected a value, got the option '--json'", {});
  // Negative numbers and values with dashes are still values.
  expect_usage_error({"ledger", "--m", "64", "--n", "-5", "--k", "64"}, "--n: expected a positive integer", {});
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "--tile", "-128x1x1"}, "--tile: expected 3",
                     {"'-128x1x1'"});
}

// Stray arguments: CLI11's message named neither the command nor, for an empty argument, anything at all.
TEST(CliFuzzRegression, StrayArgumentsAreQuotedWithTheirCommand) {
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "255"}, "ledger: expected options only",
                     {"unexpected argument '255'"});
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", ""}, "ledger: expected options only",
                     {"unexpected argument ''"});
  expect_usage_error({"plan", "--m", "64", "a", "--n", "64", "b", "--k", "64"}, "plan: expected options only",
                     {"unexpected arguments 'a' 'b'"});
  expect_usage_error({"jit", "precompile", "--m", "64", "--n", "2112", "--k", "7168", "x"},
                     "jit precompile: expected options only", {"tilegemm jit precompile --help", "'x'"});
}

// No command, or an option where the command goes, or a group command without its subcommand: CLI11 said only
// "A subcommand is required".
TEST(CliFuzzRegression, AMissingCommandListsTheCommands) {
  expect_usage_error({}, "command: expected one of ", {"ledger", "plan", "bench", "got nothing"});
  expect_usage_error({"--grouped=2"}, "command: expected one of ", {"ledger", "'--grouped=2'"});
  expect_usage_error({"-x", "ledger"}, "command: expected one of ", {"'-x'"});
  expect_usage_error({"jit"}, "jit: expected a subcommand, one of ", {"precompile", "info", "clear", "got nothing"});
  expect_usage_error({"jit", "%s", "--m", "64"}, "jit: expected a subcommand, one of ", {"got '%s'"});
  EXPECT_EQ(run_tilegemm({"--help"}).exit_code, 0);
  EXPECT_EQ(run_tilegemm({"jit", "--help"}).exit_code, 0);
}

// The heuristics name the GemmDesc fields they check (n, num_sms, d_dtype, m of all groups); plan names the
// options instead.
TEST(CliFuzzRegression, PlanNamesTheOptionsNotTheDescFields) {
  expect_usage_error({"plan", "--m", "64", "--n", "-2147483648", "--k", "7168"}, "--n: expected a positive size",
                     {"-2147483648"});
  expect_usage_error({"plan", "--m", "64", "--n", "2112", "--k", "7100"}, "--k: expected a multiple of 8", {});
  expect_usage_error({"plan", "--m", "64", "--n", "2112", "--k", "7168", "--num-sms", "99999"},
                     "--num-sms: ", {"99999"});
  expect_usage_error({"plan", "--m", "32", "--n", "1024", "--k", "512", "--out-dtype", "e5m2"},
                     "--out-dtype: expected bf16 or fp32", {});
  expect_usage_error({"plan", "--m", "64", "--n", "2112", "--k", "7168", "--gemm-type", "m_grouped_masked",
                      "--num-groups", "2", "--expected-m", "-5"},
                     "--expected-m: ", {"-5"});
  expect_usage_error(
      {"plan", "--m", "64", "--n", "4096", "--k", "7168", "--gemm-type", "m_grouped_contiguous", "--num-groups", "133"},
      "--m x --num-groups (all groups' rows): expected a multiple of 128", {"8512"});
}

// The ledger's peak lookup named "math dtype"; a type without a peak on the hardware (--dtype fp4 on an H200,
// or a --hw-json that sets flop_per_cycle_bf16 to 0 or 1e-400) names the dtype option and the hardware.
TEST(CliFuzzRegression, LedgerNamesTheDtypeOptionForAMissingPeak) {
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "--dtype", "fp4"},
                     "--dtype (on --hw h200): ", {"'fp4'"});
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "--math-dtype", "int32"},
                     "--math-dtype (on --hw h200): ", {"'int32'"});
  const std::string file = temp_dir() + "/regression_hw.json";
  std::ofstream(file, std::ios::trunc) << "{\"flop_per_cycle_bf16\": 1e-400}";
  expect_usage_error({"ledger", "--m", "64", "--n", "64", "--k", "64", "--hw-json", file},
                     "--dtype (on --hw h200 with --hw-json): ", {"'bf16'"});
}

// Integers beyond 64 bits were saturated by CLI11 before the range check, which then quoted 9223372036854775807.
TEST(CliFuzzRegression, IntegersBeyond64BitsAreQuotedAsTyped) {
  expect_usage_error({"ledger", "--m", "99999999999999999999", "--n", "64", "--k", "64"},
                     "--m: expected an integer in 64 bits", {"'99999999999999999999'"});
  expect_usage_error({"ledger", "--m", "64", "--n", "-9223372036854775809", "--k", "64"},
                     "--n: expected an integer in 64 bits", {"'-9223372036854775809'"});
  // The limits themselves still reach the range check of the option.
  expect_usage_error({"ledger", "--m", "9223372036854775807", "--n", "64", "--k", "64"},
                     "--m: expected a positive integer <= 2147483647", {"9223372036854775807"});
  expect_usage_error({"ledger", "--m", "64", "--n", "-9223372036854775808", "--k", "64"},
                     "--n: expected a positive integer", {"-9223372036854775808"});
}

}  // namespace
