#pragma once
// The process-wide on/off settings that an environment variable defaults and a setter overrides for the rest of
// the process (set_deterministic over DG_DETERMINISTIC, set_pdl over DG_ENABLE_PDL). Internal to src/, below jit/,
// kernels/ and api/, which all read them.
#include <atomic>

#include "tilegemm/env.hpp"

namespace tilegemm {

class ProcessSwitch {
 public:
  void set(bool on) { value_.store(on ? 1 : 0); }
  // The setter's value once it was called, else `env_default` (the variable, from an Env the caller already read:
  // the launch path reads env() once, each read takes its lock).
  bool resolve(bool env_default) const {
    const int v = value_.load();
    return v < 0 ? env_default : v != 0;
  }

 private:
  std::atomic<int> value_{-1};  // -1: never set
};

ProcessSwitch& deterministic_switch();
ProcessSwitch& pdl_switch();

// The launch attribute for a GEMM launch: set_pdl's value, else settings.pdl (DG_ENABLE_PDL).
inline bool pdl_enabled(const Env& settings) {
  return pdl_switch().resolve(settings.pdl);
}

}  // namespace tilegemm
