#include "jit/codegen.hpp"

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "tilegemm/errors.hpp"

namespace tilegemm::jit {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

const char* dtype_enumerator(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "kFloat32";
    case DType::kTFloat32:
      return "kTFloat32";
    case DType::kBFloat16:
      return "kBFloat16";
    case DType::kFloat16:
      return "kFloat16";
    case DType::kFloat8E4M3:
      return "kFloat8E4M3";
    case DType::kFloat8E5M2:
      return "kFloat8E5M2";
    case DType::kInt8:
      return "kInt8";
    case DType::kInt4:
      return "kInt4";
    case DType::kFloat4E2M1:
      return "kFloat4E2M1";
    case DType::kInt32:
      return "kInt32";
  }
  throw InvalidArgument("dtype", "a DType enumerator", std::to_string(static_cast<int>(t)));
}

}  // namespace

CodeFields& CodeFields::set(std::string name, DType value) {
  return set_raw(std::move(name), std::string("::tilegemm::DType::") + dtype_enumerator(value));
}

CodeFields& CodeFields::set(std::string name, Major value) {
  if (value != Major::kKMajor && value != Major::kMNMajor)
    throw InvalidArgument(name, "a Major enumerator", std::to_string(static_cast<int>(value)));
  return set_raw(std::move(name),
                 value == Major::kKMajor ? "::tilegemm::Major::kKMajor" : "::tilegemm::Major::kMNMajor");
}

CodeFields& CodeFields::set(std::string name, GemmType value) {
  static constexpr const char* kNames[] = {"kNormal", "kBatched", "kMGroupedContiguous", "kMGroupedMasked",
                                           "kKGroupedContiguous"};
  const int i = static_cast<int>(value);
  if (i < 0 || i >= 5) throw InvalidArgument(name, "a GemmType enumerator", std::to_string(i));
  return set_raw(std::move(name), std::string("::tilegemm::GemmType::") + kNames[i]);
}

CodeFields& CodeFields::set_raw(std::string name, std::string cpp_expression) {
  if (!is_identifier(name)) throw InvalidArgument("field name", "a C identifier", "'" + name + "'");
  if (find(name)) throw InvalidArgument("field name", "a name set once", "'" + name + "' set twice");
  fields_.emplace_back(std::move(name), std::move(cpp_expression));
  return *this;
}

const std::string* CodeFields::find(std::string_view name) const {
  for (const auto& [n, v] : fields_)
    if (n == name) return &v;
  return nullptr;
}

std::string substitute(std::string_view text, const CodeFields& fields) {
  std::string out;
  out.reserve(text.size() + 64);
  std::set<std::string_view> used;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("${", pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find('}', open + 2);
    if (close == std::string_view::npos)
      throw InvalidArgument("template", "'}' closing every '${'", fmt::format("an open '${{' at offset {}", open));
    const std::string_view name = text.substr(open + 2, close - open - 2);
    const std::string* value = fields.find(name);
    if (!value) throw InvalidArgument("template field", "a field set in CodeFields", fmt::format("'${{{}}}'", name));
    used.insert(name);
    out.append(text.substr(pos, open - pos));
    out.append(*value);
    pos = close + 1;
  }
  out.append(text.substr(pos));
  for (const auto& [n, v] : fields.fields())
    if (!used.count(n)) throw InvalidArgument("field", "a field used by the template", "'" + n + "' (unused)");
  return out;
}

std::string designated_init(const CodeFields& fields) {
  std::string out = "{";
  for (std::size_t i = 0; i < fields.fields().size(); ++i) {
    const auto& [n, v] = fields.fields()[i];
    out += fmt::format("{}.{} = {}", i ? ", " : "", n, v);
  }
  return out + "}";
}

}  // namespace tilegemm::jit
