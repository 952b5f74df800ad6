#include "jit/loaded_kernel.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "jit/driver_api.hpp"
#include "tilegemm/env.hpp"
#include "tilegemm/errors.hpp"

namespace tilegemm::jit {
namespace {

struct ContextModule {
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  unsigned smem_limit_set = 0;  // the max-dynamic-smem attribute already applied to `function`
  // cuOccupancyMaxActiveClusters answers, keyed by (cluster size, block threads, dynamic smem).
  std::map<std::tuple<unsigned, unsigned, unsigned>, int> max_active_clusters;
};

// The grid, block and shared-memory fields of a driver launch (attributes and stream are the caller's).
CUlaunchConfig driver_launch_config(const LaunchConfig& config, unsigned grid_x) {
  CUlaunchConfig launch = {};
  launch.gridDimX = grid_x;
  launch.gridDimY = config.grid[1];
  launch.gridDimZ = config.grid[2];
  launch.blockDimX = config.block[0];
  launch.blockDimY = config.block[1];
  launch.blockDimZ = config.block[2];
  launch.sharedMemBytes = config.smem_bytes;
  return launch;
}

class LoadedKernel final : public CompiledKernel {
 public:
  LoadedKernel(std::string name, std::string entry, std::vector<char> cubin, std::string cubin_path)
      : name_(std::move(name)),
        entry_(std::move(entry)),
        cubin_(std::move(cubin)),
        cubin_path_(std::move(cubin_path)) {}

  const std::string& name() const override { return name_; }
  const std::string& cubin_path() const override { return cubin_path_; }
  const std::vector<char>& cubin() const override { return cubin_; }

  void launch(const LaunchConfig& config, void** args) const override {
    validate_launch_config(config);
    // Messages name the kernel; they are formatted on a failure only, not on every launch (host time per call).
    const auto who = [this] { return fmt::format("kernel '{}'", name_); };
    // Resolved once per process (a failed resolution throws and is retried by the next launch).
    static const DriverApi* const driver = &driver_api(who());
    const DriverApi& api = *driver;
    CUcontext context = nullptr;
    api.cuCtxGetCurrent(&context);
    if (context == nullptr) {
      // No current context yet: let the runtime create and bind the device's primary context, as every
      // cudart call does, so our launches share streams and memory with the caller's runtime API use.
      const cudaError_t rc = cudaFree(nullptr);
      if (rc != cudaSuccess)
        throw RuntimeError(fmt::format("{}: cannot launch: no usable CUDA device ({})", who(), cudaGetErrorString(rc)));
      api.cuCtxGetCurrent(&context);
      if (context == nullptr) throw RuntimeError(who() + ": cannot launch: no current CUDA context");
    }

    CUfunction function = nullptr;
    unsigned grid_x = config.grid[0];
    const unsigned cluster_size = config.cluster[0] * config.cluster[1] * config.cluster[2];
    {
      std::lock_guard lock(mutex_);
      ContextModule* slot = nullptr;
      for (auto& m : modules_)
        if (m.context == context) slot = &m;
      if (slot == nullptr) slot = &load(api, context, who());
      if (config.smem_bytes > slot->smem_limit_set) {
        check(api,
              api.cuFuncSetAttribute(slot->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(config.smem_bytes)),
              who(), fmt::format("setting {} bytes of dynamic shared memory", config.smem_bytes));
        slot->smem_limit_set = config.smem_bytes;
      }
      function = slot->function;
      if (config.persistent && cluster_size > 1 && config.grid[1] * config.grid[2] == 1)
        grid_x = resident_grid(api, *slot, config, who);
    }

    CUlaunchAttribute attributes[2] = {};
    unsigned num_attributes = 0;
    if (config.cluster[0] * config.cluster[1] * config.cluster[2] > 1) {
      CUlaunchAttribute& a = attributes[num_attributes++];
      a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      a.value.clusterDim.x = config.cluster[0];
      a.value.clusterDim.y = config.cluster[1];
      a.value.clusterDim.z = config.cluster[2];
    }
    if (config.pdl) {
      CUlaunchAttribute& a = attributes[num_attributes++];
      a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      a.value.programmaticStreamSerializationAllowed = 1;
    }
    CUlaunchConfig launch = driver_launch_config(config, grid_x);
    launch.hStream = static_cast<CUstream>(config.stream);
    launch.attrs = num_attributes ? attributes : nullptr;
    launch.numAttrs = num_attributes;
    const CUresult status = api.cuLaunchKernelEx(&launch, function, args, nullptr);
    if (status != CUDA_SUCCESS)
      check(api, status, who(),
            fmt::format("cuLaunchKernelEx grid ({},{},{}) block ({},{},{}) cluster ({},{},{}) smem {} pdl {}", grid_x,
                        config.grid[1], config.grid[2], config.block[0], config.block[1], config.block[2],
                        config.cluster[0], config.cluster[1], config.cluster[2], config.smem_bytes, config.pdl));
  }

 private:
  // grid.x cut down to whole clusters that can all be resident at once (see LaunchConfig::persistent).
  template <class Who>
  unsigned resident_grid(const DriverApi& api, ContextModule& slot, const LaunchConfig& config, const Who& who) const {
    const unsigned cluster_size = config.cluster[0] * config.cluster[1] * config.cluster[2];
    const auto key =
        std::make_tuple(cluster_size, config.block[0] * config.block[1] * config.block[2], config.smem_bytes);
    auto it = slot.max_active_clusters.find(key);
    if (it == slot.max_active_clusters.end()) {
      CUlaunchAttribute attribute = {};
      attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attribute.value.clusterDim.x = config.cluster[0];
      attribute.value.clusterDim.y = config.cluster[1];
      attribute.value.clusterDim.z = config.cluster[2];
      CUlaunchConfig query = driver_launch_config(config, config.grid[0]);
      query.attrs = &attribute;
      query.numAttrs = 1;
      int clusters = 0;
      check(api, api.cuOccupancyMaxActiveClusters(&clusters, slot.function, &query), who(),
            "cuOccupancyMaxActiveClusters");
      if (clusters < 1)
        throw RuntimeError(fmt::format("{}: no cluster of {} CTAs ({} threads, {} bytes of shared memory) fits", who(),
                                       cluster_size, config.block[0], config.smem_bytes));
      it = slot.max_active_clusters.emplace(key, clusters).first;
      if (env().jit_debug)
        fmt::print(stderr, "tilegemm: {}: at most {} clusters of {} resident\n", who(), clusters, cluster_size);
    }
    // Persistent launches are 1-D (checked by the caller): whole clusters along x.
    const unsigned resident_x = static_cast<unsigned>(it->second) * config.cluster[0];
    return std::min(config.grid[0], resident_x);
  }

  static void check(const DriverApi& api, CUresult status, const std::string& who, const std::string& what) {
    if (status != CUDA_SUCCESS)
      throw RuntimeError(fmt::format("{}: {} failed: {}", who, what, driver_error_text(api, status)));
  }

  ContextModule& load(const DriverApi& api, CUcontext context, const std::string& who) const {
    ContextModule m;
    m.context = context;
    check(api, api.cuModuleLoadData(&m.module, cubin_.data()), who, "loading the cubin (cuModuleLoadData)");
    check(api, api.cuModuleGetFunction(&m.function, m.module, entry_.c_str()), who,
          fmt::format("finding entry '{}' in the cubin", entry_));
    modules_.push_back(m);
    return modules_.back();
  }

  std::string name_, entry_;
  std::vector<char> cubin_;
  std::string cubin_path_;
  mutable std::mutex mutex_;
  // Modules are never unloaded: a kernel may be launched until process exit, and unloading during static
  // destruction races the driver's own teardown.
  mutable std::vector<ContextModule> modules_;
};

}  // namespace

void validate_launch_config(const LaunchConfig& c) {
  const char* axes = "xyz";
  for (int i = 0; i < 3; ++i) {
    TILEGEMM_REQUIRE(c.grid[i] > 0, fmt::format("launch.grid.{}", axes[i]), "> 0", std::to_string(c.grid[i]));
    TILEGEMM_REQUIRE(c.block[i] > 0, fmt::format("launch.block.{}", axes[i]), "> 0", std::to_string(c.block[i]));
    TILEGEMM_REQUIRE(c.cluster[i] > 0, fmt::format("launch.cluster.{}", axes[i]), "> 0", std::to_string(c.cluster[i]));
    TILEGEMM_REQUIRE(c.grid[i] % c.cluster[i] == 0, fmt::format("launch.grid.{}", axes[i]),
                     fmt::format("a multiple of cluster.{} = {}", axes[i], c.cluster[i]), std::to_string(c.grid[i]));
  }
}

std::shared_ptr<const CompiledKernel> make_loaded_kernel(std::string name, std::string entry, std::vector<char> cubin,
                                                         std::string cubin_path) {
  return std::make_shared<LoadedKernel>(std::move(name), std::move(entry), std::move(cubin), std::move(cubin_path));
}

}  // namespace tilegemm::jit
