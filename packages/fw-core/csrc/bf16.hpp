// bfloat16 <-> float32 conversion for the bf16 emulation path.
#pragma once

#include <cstdint>
#include <cstring>

namespace fw {

inline float bf16_bits_to_f32(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Round to nearest, ties to even (what ml_dtypes and oneDNN do); NaN stays a
// quiet NaN with its sign.
inline uint16_t f32_to_bf16_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
}

// Both loops are memory bound; OpenMP only pays off on large arrays.
inline void bf16_to_f32(const uint16_t *src, float *dst, int64_t n) {
#pragma omp parallel for if (n > (int64_t(1) << 18)) schedule(static)
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_f32(src[i]);
}

inline void f32_to_bf16(const float *src, uint16_t *dst, int64_t n) {
#pragma omp parallel for if (n > (int64_t(1) << 18)) schedule(static)
    for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_bf16_bits(src[i]);
}

}  // namespace fw
