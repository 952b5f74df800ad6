# find_package(tilegemm): target tilegemm::tilegemm_core (static; C++20) and its dependencies: the CUDA toolkit it
# was built against (cudart static, NVRTC), threads, and {fmt} / nlohmann/json headers, found here as at build time
# (TILEGEMM_DEPS_DIR or CMAKE_PREFIX_PATH may point at them).
include(CMakeFindDependencyMacro)
find_dependency(CUDAToolkit 12.8)
find_dependency(Threads)
find_path(TILEGEMM_FMT_INCLUDE fmt/format.h HINTS ${TILEGEMM_DEPS_DIR}/include)
find_path(TILEGEMM_JSON_INCLUDE nlohmann/json.hpp HINTS ${TILEGEMM_DEPS_DIR}/include)
if(NOT TILEGEMM_FMT_INCLUDE OR NOT TILEGEMM_JSON_INCLUDE)
  set(tilegemm_FOUND FALSE)
  set(tilegemm_NOT_FOUND_MESSAGE "tilegemm needs the {fmt} and nlohmann/json headers (set TILEGEMM_DEPS_DIR)")
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/tilegemm-targets.cmake)
target_include_directories(tilegemm::tilegemm_deps SYSTEM INTERFACE ${TILEGEMM_FMT_INCLUDE} ${TILEGEMM_JSON_INCLUDE})
