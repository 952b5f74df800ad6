// HardwareModel <-> JSON: one table of fields serves both directions, so a key the printer emits is always a
// key the override parser accepts.
#include <cmath>
#include <limits>
#include <variant>

#include <nlohmann/json.hpp>

#include "tilegemm/errors.hpp"
#include "tilegemm/hw.hpp"

namespace tilegemm {

namespace {

using FieldPtr = std::variant<std::string HardwareModel::*, double HardwareModel::*, int HardwareModel::*>;
struct Field {
  const char* key;
  FieldPtr ptr;
  // The SM count, clock and bandwidth every model divides by: 0 would surface later as an unrelated error. Other
  // fields may be 0 on some parts (peak rates of formats a part lacks, NVIDIA limits on an Ascend preset).
  bool positive = false;
};

const std::vector<Field>& fields() {
  using H = HardwareModel;
  static const std::vector<Field> table = {
      {"name", &H::name},
      {"num_sms", &H::num_sms, true},
      {"sm_clock_mhz", &H::sm_clock_mhz, true},
      {"flop_per_cycle_bf16", &H::flop_per_cycle_bf16},
      {"flop_per_cycle_fp8", &H::flop_per_cycle_fp8},
      {"flop_per_cycle_int8", &H::flop_per_cycle_int8},
      {"flop_per_cycle_tf32", &H::flop_per_cycle_tf32},
      {"flop_per_cycle_fp4", &H::flop_per_cycle_fp4},
      {"flop_per_cycle_int4", &H::flop_per_cycle_int4},
      {"flop_per_cycle_fp32_cuda_core", &H::flop_per_cycle_fp32_cuda_core},
      {"hbm_gbps", &H::hbm_gbps, true},
      {"l2_bytes", &H::l2_bytes},
      {"smem_per_sm_bytes", &H::smem_per_sm_bytes},
      {"smem_per_block_bytes", &H::smem_per_block_bytes},
      {"smem_reserved_per_block_bytes", &H::smem_reserved_per_block_bytes},
      {"regs_per_sm", &H::regs_per_sm},
      {"max_regs_per_thread", &H::max_regs_per_thread},
      {"reg_alloc_granularity", &H::reg_alloc_granularity},
      {"max_threads_per_sm", &H::max_threads_per_sm},
      {"max_blocks_per_sm", &H::max_blocks_per_sm},
      {"max_cluster_size", &H::max_cluster_size},
      {"ascend_l1_bytes", &H::ascend_l1_bytes},
      {"ascend_l0a_bytes", &H::ascend_l0a_bytes},
      {"ascend_l0b_bytes", &H::ascend_l0b_bytes},
      {"ascend_l0c_bytes", &H::ascend_l0c_bytes},
  };
  return table;
}

std::string known_keys() {
  std::string keys;
  for (const auto& f : fields()) keys += (keys.empty() ? "" : ", ") + std::string(f.key);
  return keys;
}

}  // namespace

void apply_hardware_overrides_json(HardwareModel& hw, const std::string& json_text, const std::string& argument) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is where the parser gave up; the full what() would leak nlohmann's internal ids.
    throw InvalidArgument(argument, "a JSON object of hardware fields",
                          fmt::format("malformed JSON (parse error at byte {})", e.byte));
  } catch (const nlohmann::json::exception&) {
    // out_of_range: a literal such as 1e400 that no double holds.
    throw InvalidArgument(argument, "a JSON object of hardware fields with finite numbers",
                          "a number outside double's range");
  }
  if (!j.is_object())
    throw InvalidArgument(argument, "a JSON object of hardware fields", fmt::format("a JSON {}", j.type_name()));

  HardwareModel updated = hw;  // all-or-nothing: a bad key leaves `hw` untouched
  for (const auto& [key, value] : j.items()) {
    const Field* field = nullptr;
    for (const auto& f : fields())
      if (key == f.key) field = &f;
    if (!field) throw InvalidArgument(argument, "keys among " + known_keys(), fmt::format("unknown key '{}'", key));
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(updated.*member)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (!value.is_string()) throw InvalidArgument(argument + " key '" + key + "'", "a string", value.dump());
            updated.*member = value.get<std::string>();
          } else {
            if (!value.is_number()) throw InvalidArgument(argument + " key '" + key + "'", "a number", value.dump());
            const double v = value.get<double>();
            if (!std::isfinite(v) || v < 0 || (field->positive && v == 0))
              throw InvalidArgument(argument + " key '" + key + "'",
                                    field->positive ? "a finite number > 0" : "a finite number >= 0", value.dump());
            if constexpr (std::is_same_v<T, int>) {
              if (v != std::floor(v) || v > std::numeric_limits<int>::max())
                throw InvalidArgument(argument + " key '" + key + "'", "an integer", value.dump());
              updated.*member = static_cast<int>(v);
            } else {
              updated.*member = v;
            }
          }
        },
        field->ptr);
  }
  hw = std::move(updated);
}

std::string hardware_to_json(const HardwareModel& hw) {
  nlohmann::ordered_json j;
  for (const auto& f : fields()) std::visit([&](auto member) { j[f.key] = hw.*member; }, f.ptr);
  return j.dump();
}

}  // namespace tilegemm
