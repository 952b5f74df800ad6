#pragma once
// Codegen with named fields: a kernel family writes its generated .cu as a template with ${NAME}
// placeholders (`${` never occurs in C++, so the rest of the source needs no escaping) and fills them from a
// CodeFields map whose values are already C++ expressions. designated_init() renders the same fields as a
// C++20 designated initializer for a config struct used as a template parameter.
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tilegemm/shared_enums.hpp"

namespace tilegemm::jit {

class CodeFields {
 public:
  CodeFields& set(std::string name, bool value) { return set_raw(std::move(name), value ? "true" : "false"); }
  CodeFields& set(std::string name, DType value);
  CodeFields& set(std::string name, Major value);
  CodeFields& set(std::string name, GemmType value);
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>>>
  CodeFields& set(std::string name, Int value) {
    return set_raw(std::move(name), std::to_string(value) + (std::is_unsigned_v<Int> ? "u" : ""));
  }
  // A value that is already C++ text (a type name, an expression). Names are C identifiers; a repeated name
  // throws InvalidArgument.
  CodeFields& set_raw(std::string name, std::string cpp_expression);

  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  const std::string* find(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Replaces every ${NAME} in `text`. A placeholder without a field, or a field no placeholder uses, throws
// InvalidArgument naming it (a typo in a template must not silently produce a different kernel).
std::string substitute(std::string_view text, const CodeFields& fields);

// "{.block_m = 128, .block_n = 256}" — field order is insertion order, which must match the struct's
// declaration order (C++20 designated initializers require it; the compiler says so otherwise).
std::string designated_init(const CodeFields& fields);

}  // namespace tilegemm::jit
