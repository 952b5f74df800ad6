#pragma once
// The FP8 MoE layer's routing, dispatch, SwiGLU-quantisation and combine kernels
// (device/tilegemm/kernels/sm90_moe.cuh): their generated sources and launches.
#include "tilegemm/jit.hpp"
#include "tilegemm/moe_params.hpp"

namespace tilegemm::kernels {

enum class MoeKernel { kRoute, kDispatch, kSwigluQuant, kCombine };

jit::KernelSpec sm90_moe_spec(MoeKernel kernel);

void launch_sm90_moe_route(const MoeRouteParams& params, void* stream);
// The others take one CTA per token (pair for SwiGLU) up to `max_ctas`.
void launch_sm90_moe_dispatch(const MoeDispatchParams& params, int max_ctas, void* stream);
void launch_sm90_moe_swiglu_quant(const MoeSwigluParams& params, int max_ctas, void* stream);
void launch_sm90_moe_combine(const MoeCombineParams& params, int max_ctas, void* stream);

}  // namespace tilegemm::kernels
