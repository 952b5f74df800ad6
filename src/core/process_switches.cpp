#include "core/process_switches.hpp"

namespace tilegemm {

ProcessSwitch& deterministic_switch() {
  static ProcessSwitch s;
  return s;
}

ProcessSwitch& pdl_switch() {
  static ProcessSwitch s;
  return s;
}

}  // namespace tilegemm
