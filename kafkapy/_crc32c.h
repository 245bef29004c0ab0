/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) for kafkapy._records.
 *
 * Three implementations behind one entry point, chosen once at start-up:
 *   x86_64   SSE4.2 crc32q, three interleaved streams (crc32 has a latency of 3 cycles and a
 *            throughput of 1, so one stream leaves two thirds of the unit idle), combined with
 *            "shift by N zero bytes" tables;
 *   aarch64  the ARMv8 CRC32 extension (crc32cx, via the builtins behind ACLE's __crc32cd),
 *            same three-stream scheme (Linux: detected with getauxval(AT_HWCAP));
 *   anywhere portable slicing-by-8.
 * The hardware paths are compiled with per-function target attributes and picked by a runtime
 * CPU check, so no global compiler flag is needed and the module still loads on CPUs without
 * the instructions.
 *
 * kp_crc32c_init() must run once before kp_crc32c() (the module init does it); afterwards
 * everything is read-only and kp_crc32c() may run without the GIL from any thread.
 *
 * The interleave-and-combine method is Mark Adler's (crc32c.c, zlib licence, 2013), rewritten.
 */
#ifndef KAFKAPY_CRC32C_H
#define KAFKAPY_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KP_CRC32C_POLY 0x82F63B78u
/* Stream lengths for the three-way interleave: LONG for big buffers, MID for batch-sized ones
 * (a 10 KiB batch in 768-byte SHORT blocks spends a third of its time combining), SHORT for
 * the rest. */
#define KP_CRC32C_LONG 8192
#define KP_CRC32C_MID 1024
#define KP_CRC32C_SHORT 256

static uint32_t kp_crc32c_table[8][256];          /* slicing-by-8 */
static uint32_t kp_crc32c_long[4][256];           /* shift a CRC over LONG zero bytes */
static uint32_t kp_crc32c_mid[4][256];            /* shift a CRC over MID zero bytes */
static uint32_t kp_crc32c_short[4][256];          /* shift a CRC over SHORT zero bytes */
static int kp_crc32c_impl = 0;                    /* 0 software, 1 x86 SSE4.2, 2 ARMv8 */

/* ------------------------------------------------------------------ GF(2) shift operators */

static uint32_t kp_gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1) sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}

static void kp_gf2_square(uint32_t *square, const uint32_t *mat) {
    int n;
    for (n = 0; n < 32; n++) square[n] = kp_gf2_times(mat, mat[n]);
}

/* Operator that feeds `len` zero bytes (a power of two) through a CRC register. */
static void kp_crc32c_zeros_op(uint32_t *even, size_t len) {
    uint32_t odd[32];
    uint32_t row = 1;
    int n;
    odd[0] = KP_CRC32C_POLY;              /* one zero bit */
    for (n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    kp_gf2_square(even, odd);             /* two zero bits */
    kp_gf2_square(odd, even);             /* four zero bits */
    do {
        kp_gf2_square(even, odd);         /* 8, 32, 128, ... zero bits */
        len >>= 1;
        if (len == 0) return;
        kp_gf2_square(odd, even);         /* 16, 64, 256, ... zero bits */
        len >>= 1;
    } while (len);
    for (n = 0; n < 32; n++) even[n] = odd[n];
}

static void kp_crc32c_zeros(uint32_t zeros[][256], size_t len) {
    uint32_t op[32];
    uint32_t n;
    kp_crc32c_zeros_op(op, len);
    for (n = 0; n < 256; n++) {
        zeros[0][n] = kp_gf2_times(op, n);
        zeros[1][n] = kp_gf2_times(op, n << 8);
        zeros[2][n] = kp_gf2_times(op, n << 16);
        zeros[3][n] = kp_gf2_times(op, n << 24);
    }
}

static inline uint32_t kp_crc32c_shift(uint32_t zeros[][256], uint32_t crc) {
    return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
           zeros[2][(crc >> 16) & 0xff] ^ zeros[3][crc >> 24];
}

static inline uint64_t kp_load64le(const unsigned char *p) {
    /* memcpy keeps unaligned loads defined; byte order fixed so the tables work anywhere. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
           ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
           ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
#endif
}

/* ------------------------------------------------------------------------ portable */

static uint32_t kp_crc32c_sw(uint32_t crc, const unsigned char *p, size_t len) {
    uint64_t w;
    crc = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        crc = kp_crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        len--;
    }
    while (len >= 8) {
        w = kp_load64le(p) ^ crc;
        crc = kp_crc32c_table[7][w & 0xff] ^ kp_crc32c_table[6][(w >> 8) & 0xff] ^
              kp_crc32c_table[5][(w >> 16) & 0xff] ^ kp_crc32c_table[4][(w >> 24) & 0xff] ^
              kp_crc32c_table[3][(w >> 32) & 0xff] ^ kp_crc32c_table[2][(w >> 40) & 0xff] ^
              kp_crc32c_table[1][(w >> 48) & 0xff] ^ kp_crc32c_table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--) crc = kp_crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* ------------------------------------------------------------------------ hardware */

/* Three streams of N bytes each at p, p+N, p+2N, folded back into c0. */
#define KP_CRC32C_BLOCK(CRC64, N, ZEROS)                                                    \
    c1 = 0;                                                                                 \
    c2 = 0;                                                                                 \
    end = p + (N);                                                                          \
    do {                                                                                    \
        c0 = CRC64(c0, kp_load64le(p));                                                     \
        c1 = CRC64(c1, kp_load64le(p + (N)));                                               \
        c2 = CRC64(c2, kp_load64le(p + 2 * (N)));                                           \
        p += 8;                                                                             \
    } while (p < end);                                                                      \
    c0 = kp_crc32c_shift(ZEROS, (uint32_t)c0) ^ (uint32_t)c1;                               \
    c0 = kp_crc32c_shift(ZEROS, (uint32_t)c0) ^ (uint32_t)c2;                               \
    p += 2 * (N);                                                                           \
    len -= 3 * (N);

/* One body for both architectures: CRC8(c, byte) and CRC64(c, u64) are the instructions. */
#define KP_CRC32C_HW_BODY(CRC8, CRC64)                                                      \
    const unsigned char *end;                                                               \
    uint64_t c0 = (uint32_t)~crc, c1, c2;                                                   \
    while (len && ((uintptr_t)p & 7)) {                                                     \
        c0 = CRC8((uint32_t)c0, *p++);                                                      \
        len--;                                                                              \
    }                                                                                       \
    while (len >= 3 * KP_CRC32C_LONG) {                                                     \
        KP_CRC32C_BLOCK(CRC64, KP_CRC32C_LONG, kp_crc32c_long)                              \
    }                                                                                       \
    while (len >= 3 * KP_CRC32C_MID) {                                                      \
        KP_CRC32C_BLOCK(CRC64, KP_CRC32C_MID, kp_crc32c_mid)                                \
    }                                                                                       \
    while (len >= 3 * KP_CRC32C_SHORT) {                                                    \
        KP_CRC32C_BLOCK(CRC64, KP_CRC32C_SHORT, kp_crc32c_short)                            \
    }                                                                                       \
    while (len >= 8) {                                                                      \
        c0 = CRC64(c0, kp_load64le(p));                                                     \
        p += 8;                                                                             \
        len -= 8;                                                                           \
    }                                                                                       \
    while (len) {                                                                           \
        c0 = CRC8((uint32_t)c0, *p++);                                                      \
        len--;                                                                              \
    }                                                                                       \
    return ~(uint32_t)c0;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KP_CRC32C_HAVE_X86 1
#include <immintrin.h>

__attribute__((target("sse4.2")))
static uint32_t kp_crc32c_x86(uint32_t crc, const unsigned char *p, size_t len) {
#define KP_X86_CRC8(c, b) _mm_crc32_u8((c), (b))
#define KP_X86_CRC64(c, w) _mm_crc32_u64((c), (w))
    KP_CRC32C_HW_BODY(KP_X86_CRC8, KP_X86_CRC64)
#undef KP_X86_CRC8
#undef KP_X86_CRC64
}
#endif

#if defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define KP_CRC32C_HAVE_ARM 1
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
/* The compiler builtins behind ACLE's __crc32cb/__crc32cd: older GCC's <arm_acle.h> hides the
 * intrinsics unless CRC is enabled for the whole translation unit, the builtins only need the
 * function's target attribute. */
#if defined(__clang__)
#define KP_ARM_TARGET __attribute__((target("crc")))
#define KP_ARM_CRC8(c, b) __builtin_arm_crc32cb((c), (b))
#define KP_ARM_CRC64(c, w) __builtin_arm_crc32cd((uint32_t)(c), (w))
#else
#define KP_ARM_TARGET __attribute__((target("+crc")))
#define KP_ARM_CRC8(c, b) __builtin_aarch64_crc32cb((c), (b))
#define KP_ARM_CRC64(c, w) __builtin_aarch64_crc32cx((uint32_t)(c), (w))
#endif

KP_ARM_TARGET
static uint32_t kp_crc32c_arm(uint32_t crc, const unsigned char *p, size_t len) {
    KP_CRC32C_HW_BODY(KP_ARM_CRC8, KP_ARM_CRC64)
}
#endif

/* ------------------------------------------------------------------------ entry points */

static void kp_crc32c_init(void) {
    uint32_t n, k, c;
    for (n = 0; n < 256; n++) {
        c = n;
        for (k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ KP_CRC32C_POLY : c >> 1;
        kp_crc32c_table[0][n] = c;
    }
    for (n = 0; n < 256; n++) {
        c = kp_crc32c_table[0][n];
        for (k = 1; k < 8; k++) {
            c = kp_crc32c_table[0][c & 0xff] ^ (c >> 8);
            kp_crc32c_table[k][n] = c;
        }
    }
    kp_crc32c_zeros(kp_crc32c_long, KP_CRC32C_LONG);
    kp_crc32c_zeros(kp_crc32c_mid, KP_CRC32C_MID);
    kp_crc32c_zeros(kp_crc32c_short, KP_CRC32C_SHORT);
    kp_crc32c_impl = 0;
#ifdef KP_CRC32C_HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) kp_crc32c_impl = 1;
#endif
#ifdef KP_CRC32C_HAVE_ARM
    if (getauxval(AT_HWCAP) & HWCAP_CRC32) kp_crc32c_impl = 2;
#endif
}

static uint32_t kp_crc32c(uint32_t crc, const unsigned char *p, size_t len) {
#ifdef KP_CRC32C_HAVE_X86
    if (kp_crc32c_impl == 1) return kp_crc32c_x86(crc, p, len);
#endif
#ifdef KP_CRC32C_HAVE_ARM
    if (kp_crc32c_impl == 2) return kp_crc32c_arm(crc, p, len);
#endif
    return kp_crc32c_sw(crc, p, len);
}

#endif /* KAFKAPY_CRC32C_H */
