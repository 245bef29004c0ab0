/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) for kafkapy._records and kafkapy._log.
 *
 * Four implementations behind one entry point. kp_crc32c_init() picks the first of them, in
 * this order, that the compiler could build and the CPU can run (CPUID and XGETBV on x86,
 * getauxval(AT_HWCAP) on Linux/aarch64); nothing else influences the choice:
 *   sse4.2+vpclmul  x86_64 with SSE4.2, PCLMULQDQ, AVX2 and VPCLMULQDQ, and an OS that saves
 *                   the ymm registers: buffers of 672 bytes and more are split between
 *                   carry-less-multiply folding on 256-bit registers and three crc32q streams
 *                   running at the same time (they use different execution units), about
 *                   1.5x-1.6x the sse4.2 speed on 64 KiB-1 MiB on Zen 3, 1.5x from DRAM;
 *                   shorter buffers and the tail go to sse4.2. See "x86: carry-less folding
 *                   alongside crc32q" below. Needs GCC 8 or clang 6 to compile; older
 *                   compilers build the others only;
 *   sse4.2          x86_64 SSE4.2 crc32q, three interleaved streams (crc32 has a latency of 3
 *                   cycles and a throughput of 1, so one stream leaves two thirds of the unit
 *                   idle), combined with "shift by N zero bytes" tables;
 *   armv8-crc       the ARMv8 CRC32 extension (crc32cx, via the builtins behind ACLE's
 *                   __crc32cd), same three-stream scheme (Linux only);
 *   portable        slicing-by-8, anywhere.
 * The hardware paths are compiled with per-function target attributes and picked by a runtime
 * CPU check, so no global compiler flag is needed and the module still loads on CPUs without
 * the instructions. There is deliberately no switch (environment or otherwise) to pick another
 * path: the tests run each one the CPU can run through kp_crc32c_with() instead
 * (kafkapy._records._crc32c_with).
 *
 * kp_crc32c_init() must run once before kp_crc32c() (the module init does it); afterwards
 * everything is read-only and kp_crc32c() may run without the GIL from any thread.
 *
 * The interleave-and-combine method is Mark Adler's (crc32c.c, zlib licence, 2013), rewritten;
 * the folding is the textbook carry-less-multiply scheme (Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ", 2009), written here from the algebra below.
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

/* The implementations, numbered in order of preference (see kp_crc32c_name for their names). */
enum { KP_CRC32C_PORTABLE, KP_CRC32C_ARM, KP_CRC32C_SSE42, KP_CRC32C_VPCLMUL, KP_CRC32C_NIMPL };
static unsigned kp_crc32c_avail = 0;  /* bit i: this build and CPU can run implementation i */
static int kp_crc32c_impl = 0;        /* the one kp_crc32c() runs: the highest bit of avail */

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
#include <cpuid.h>
#include <immintrin.h>

__attribute__((target("sse4.2")))
static uint32_t kp_crc32c_x86(uint32_t crc, const unsigned char *p, size_t len) {
#define KP_X86_CRC8(c, b) _mm_crc32_u8((c), (b))
#define KP_X86_CRC64(c, w) _mm_crc32_u64((c), (w))
    KP_CRC32C_HW_BODY(KP_X86_CRC8, KP_X86_CRC64)
#undef KP_X86_CRC8
#undef KP_X86_CRC64
}

/* ----------------------------------------- x86: carry-less folding alongside crc32q
 *
 * Folding. Read 16 bytes little-endian as a polynomial in the reflected convention: bit i of the
 * 128-bit value is the coefficient of x^(127-i), so the low quadword holds the high half H
 * (x^64..x^127) and the high quadword the low half L. Followed by d more bytes, the block adds
 * (H*x^64 + L) * x^(8d) to the message polynomial; only its remainder mod P matters, so it can be
 * replaced by H*(x^(8d+64) mod P) + L*(x^(8d) mod P), of degree < 96, and XORed into the block d
 * bytes further on. PCLMULQDQ (carry-less 64x64 -> 127-bit multiply) does each half in one
 * instruction. Read back as a block, the product of two reflected quadwords is worth x times the
 * true product, and a 32-bit constant in the low half of its quadword is worth x^32 times its
 * value, so the constants for a fold over d bytes are
 *     low quadword  x^(8d+31) mod P   (multiplies H: x * x^32 * x^(8d+31) = x^(8d+64))
 *     high quadword x^(8d-33) mod P   (multiplies L: x * x^32 * x^(8d-33) = x^(8d))
 * computed at init by kp_crc32c_xpow. Eight independent 16-byte lanes (two in each of 4 ymm
 * registers) fold 128 bytes per step, so a step's multiplies are all in flight together. At the
 * end lane j is folded over 112-16j bytes onto lane 7, leaving one block X; the CRC register after
 * X is X * x^32 mod P, which is exactly what crc32q computes from a zero register over X's 16
 * bytes. The incoming register is XORed into the first 4 data bytes (a register is the next 32
 * message bits, already divided).
 *
 * Why it is faster: crc32q runs on one integer port at 8 bytes/cycle and the three-stream code
 * already saturates it. The carry-less multiplies run on a vector port, so each fold step also
 * feeds three crc32q streams with M quadwords each, from regions of their own. A block of n steps
 * (n <= N) is laid out as [n*128 bytes folded][cb][cb][cb], cb = 8*n*M, one region per stream, and
 * both units stay busy. Between blocks the lanes jump over the stream regions (a fold over
 * 128 + 3*cb bytes), and the streams' registers (each started from zero) go into the next
 * block's first quadword, where a register belongs:
 *     c2 as it is, c1 * x^(8cb+31), c0 * x^(16cb+31)
 * one carry-less multiply each and no reduction: a 63-bit product is just more message bits at
 * that position. After the last block the lanes are reduced to the register r at the start of its
 * stream regions, and r*x^(24cb) + c0*x^(16cb) + c1*x^(8cb) + c2 comes from multiplying each by
 * x^(8d-33), d its distance in bytes from the end (3cb, 2cb, cb), XORing the products and running
 * crc32q from zero over them (which supplies the x^32 and the reduction). The last block is
 * shortened to what is left (n = len / step), and the tail (less than one step) goes through
 * kp_crc32c_x86.
 *
 * On Zen 3 (one VPCLMULQDQ ymm per 2 cycles, one crc32q per cycle) folding alone and crc32q
 * alone both run at ~8 bytes/cycle; together, with M = 6, at ~13: on a Zen 3 EPYC VM, through
 * kafkapy._records.crc32c from Python, 1 MiB ran at ~38 GB/s against ~24, 64 KiB at ~33 against
 * ~22 (the last part of each buffer, under one step, runs at crc32q speed).
 *
 * The four regions are four sequential read streams, which the hardware prefetchers serve well
 * only when the runs are long: N = 128 makes a full block 34 KiB (regions of 16 and 6 KiB),
 * and each step also prefetches one block ahead in all four. With 4 KiB blocks and no
 * prefetch, buffers coming from L3 ran a fifth slower than L1/L2 ones, and from DRAM 15%
 * slower than the crc32q-only code; now L3 costs ~5% and DRAM runs 1.4x faster than before
 * (20 against 14 GB/s, more than a plain one-stream read loop gets).
 *
 * Why there is no 128-bit (plain PCLMULQDQ) version for CPUs without VPCLMULQDQ: it needs 16
 * multiplies per step, which Zen 3 issues at one per 2 cycles too, and measured ~1.1x crc32q
 * alone at its best (M = 8) and 0.65x at M = 5, so it was removed rather than kept behind a
 * switch. It might pay on Intel from Broadwell to Comet Lake (PCLMULQDQ one per cycle, on
 * another port than crc32); that is unmeasured.
 *
 * The constants and the block bookkeeping were first checked against a Python model
 * (integers as GF(2) polynomials) and the `crc32c` package; tests/protocol/test_crc32c.py
 * checks every path this CPU can run against the package.
 *
 * All of it needs a compiler that knows VPCLMULQDQ (GCC 8, clang 6); older ones leave
 * KP_CRC32C_HAVE_VPCLMUL undefined and build sse4.2 only.
 */
#if (defined(__clang__) && __clang_major__ >= 6) || (!defined(__clang__) && __GNUC__ >= 8)
#define KP_CRC32C_HAVE_VPCLMUL 1

#define KP_CRC32C_N 128          /* fold steps per block */
#define KP_CRC32C_M 6            /* crc32q per stream per step */

/* x^n mod P as a reflected register value (bit t holds the coefficient of x^(31-t), so x^0 is
 * 0x80000000): square-and-multiply over kp_crc32c_mulmod, which is Horner's rule on a's bits
 * from x^31 (bit 0) down, one "multiply by x" (shift right, reduce) per bit. Init only. */
static uint32_t kp_crc32c_mulmod(uint32_t a, uint32_t b) {
    uint32_t r = 0, m;
    for (m = 1; m; m <<= 1) {
        r = (r & 1) ? (r >> 1) ^ KP_CRC32C_POLY : r >> 1;
        if (a & m) r ^= b;
    }
    return r;
}

static uint32_t kp_crc32c_xpow(uint64_t n) {
    uint32_t r = 0x80000000u, base = 0x40000000u;      /* 1 and x */
    while (n) {
        if (n & 1) r = kp_crc32c_mulmod(r, base);
        base = kp_crc32c_mulmod(base, base);
        n >>= 1;
    }
    return r;
}

typedef struct {
    uint64_t jump[2];        /* full blocks: fold over 128 + 3*CB bytes, CB = 8*N*M */
    uint64_t inj[2];         /* full blocks: c0, c1 into the next one, x^(16CB+31), x^(8CB+31) */
    /* the last block, by its number of steps n (cb = 8*n*M): r, c0, c1 at the end,
     * x^(24cb-33), x^(16cb-33), x^(8cb-33), and a zero */
    uint64_t fin[KP_CRC32C_N + 1][4];
} kp_crc32c_layout;

static uint64_t kp_crc32c_fold_k[8][2];                  /* fold over 16*(i+1) bytes */
static kp_crc32c_layout kp_crc32c_lay;

static void kp_crc32c_fold_consts(uint64_t k[2], uint64_t d) {
    k[0] = kp_crc32c_xpow(8 * d + 31);
    k[1] = kp_crc32c_xpow(8 * d - 33);
}

static void kp_crc32c_layout_init(kp_crc32c_layout *lay) {
    const uint64_t m = KP_CRC32C_M, cb = 8 * KP_CRC32C_N * m;
    uint32_t step = kp_crc32c_xpow(64 * m);          /* what one more step adds to cb, in bits */
    int n, i;
    kp_crc32c_fold_consts(lay->jump, 128 + 3 * cb);
    lay->inj[0] = kp_crc32c_xpow(16 * cb + 31);
    lay->inj[1] = kp_crc32c_xpow(8 * cb + 31);
    memset(lay->fin, 0, sizeof lay->fin);
    lay->fin[1][0] = kp_crc32c_xpow(24 * 8 * m - 33);
    lay->fin[1][1] = kp_crc32c_xpow(16 * 8 * m - 33);
    lay->fin[1][2] = kp_crc32c_xpow(8 * 8 * m - 33);
    for (n = 2; n <= KP_CRC32C_N; n++)
        for (i = 0; i < 3; i++) {      /* x^(k*8*n*m - 33) = x^(k*8*(n-1)*m - 33) * step^k */
            uint32_t c = (uint32_t)lay->fin[n - 1][i];
            int t;
            for (t = 0; t < 3 - i; t++) c = kp_crc32c_mulmod(c, step);
            lay->fin[n][i] = c;
        }
}

static void kp_crc32c_fold_init(void) {
    int i;
    for (i = 0; i < 8; i++) kp_crc32c_fold_consts(kp_crc32c_fold_k[i], 16 * (uint64_t)(i + 1));
    kp_crc32c_layout_init(&kp_crc32c_lay);
}

/* Prefetch `ahead` bytes past p. The address may lie past the buffer (a prefetch never
 * faults); it is formed as an integer because such a pointer could not be formed in C. */
#define KP_CRC32C_PREFETCH(p, ahead)                                                        \
    _mm_prefetch((const char *)((uintptr_t)(p) + (ahead)), _MM_HINT_T0)

/* M quadwords of each of the three stream regions at q0, q1, q2, each prefetching one full
 * block ahead. The loop must be unrolled (the pragma's count is at least M): GCC does it at -O3
 * but not at -O2, the CFLAGS of some Pythons (Debian's), where the rolled loop cost a quarter
 * of the speed (64 KiB: 32 GB/s against 42). Clang unrolls it either way. */
#define KP_CRC32C_STREAMS(M, AHEAD)                                                         \
    KP_CRC32C_PREFETCH(q0, AHEAD);                                                          \
    KP_CRC32C_PREFETCH(q1, AHEAD);                                                          \
    KP_CRC32C_PREFETCH(q2, AHEAD);                                                          \
    _Pragma("GCC unroll 16")                                                                \
    for (j = 0; j < (M); j++) {                                                             \
        c0 = _mm_crc32_u64(c0, kp_load64le(q0 + 8 * j));                                    \
        c1 = _mm_crc32_u64(c1, kp_load64le(q1 + 8 * j));                                    \
        c2 = _mm_crc32_u64(c2, kp_load64le(q2 + 8 * j));                                    \
    }                                                                                       \
    q0 += 8 * (M);                                                                          \
    q1 += 8 * (M);                                                                          \
    q2 += 8 * (M);

/* The stream registers as message bits in the next block's first quadword (see above). */
__attribute__((target("pclmul,sse4.2")))
static inline __m128i kp_crc32c_inject(const uint64_t inj[2], uint64_t c0, uint64_t c1,
                                       uint64_t c2) {
    __m128i c = _mm_set_epi64x((long long)c1, (long long)c0);
    __m128i k = _mm_loadu_si128((const __m128i *)inj);
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(c, k, 0x00),
                                       _mm_clmulepi64_si128(c, k, 0x11)),
                         _mm_cvtsi64_si128((long long)c2));
}

/* The register after the last block's stream regions, from the lanes' block x (the 16 bytes
 * before the stream regions) and the three stream registers. */
__attribute__((target("pclmul,sse4.2")))
static inline uint32_t kp_crc32c_finish(const uint64_t fin[4], __m128i x, uint64_t c0,
                                        uint64_t c1, uint64_t c2) {
    uint64_t r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x));
    __m128i v, k = _mm_loadu_si128((const __m128i *)fin);
    r = _mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(x, 1));
    v = _mm_set_epi64x((long long)c0, (long long)r);
    v = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x00),
                                    _mm_clmulepi64_si128(v, k, 0x11)),
                      _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1),
                                           _mm_loadu_si128((const __m128i *)(fin + 2)), 0x00));
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v)) ^ (uint32_t)c2;
}

/* One 16-byte lane folded over the distance whose constants are k, plus d. */
#define KP_CRC32C_FOLDX(a, k, d)                                                            \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((a), (k), 0x00),                      \
                                _mm_clmulepi64_si128((a), (k), 0x11)), (d))

/* Two lanes per ymm register, both folded by the same constants. */
#define KP_CRC32C_FOLDY(a, k, d)                                                            \
    _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128((a), (k), 0x00),             \
                                      _mm256_clmulepi64_epi128((a), (k), 0x11)), (d))
#define KP_CRC32C_LOADY(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define KP_CRC32C_BCASTY(k) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(k)))
#define KP_CRC32C_STEPY(K, D0)                                                              \
    a0 = KP_CRC32C_FOLDY(a0, K, D0);                                                        \
    a1 = KP_CRC32C_FOLDY(a1, K, KP_CRC32C_LOADY(p + 32));                                   \
    a2 = KP_CRC32C_FOLDY(a2, K, KP_CRC32C_LOADY(p + 64));                                   \
    a3 = KP_CRC32C_FOLDY(a3, K, KP_CRC32C_LOADY(p + 96));                                   \
    KP_CRC32C_PREFETCH(p, yahead);                                                          \
    KP_CRC32C_PREFETCH(p, yahead + 64);                                                     \
    p += 128;                                                                               \
    KP_CRC32C_STREAMS(KP_CRC32C_M, yahead)

/* Blocks of n <= N steps: [n*128 bytes folded in 8 lanes, 4 ymm registers][cb][cb][cb],
 * cb = 8*n*M, the three crc32q streams' regions. */
__attribute__((target("vpclmulqdq,avx2,pclmul,sse4.2")))
static uint32_t kp_crc32c_vpclmul(uint32_t crc, const unsigned char *p, size_t len) {
    const size_t step = 128 + 24 * KP_CRC32C_M, yahead = KP_CRC32C_N * step;
    const __m256i k128 = KP_CRC32C_BCASTY(kp_crc32c_fold_k[7]);
    __m256i a0, a1, a2, a3, k = k128, inj = _mm256_setzero_si256();
    __m128i x;
    const unsigned char *q0, *q1, *q2;
    uint64_t c0, c1, c2;
    size_t n, i, cb;
    int j;
    if (len < 128 + 2 * step) return kp_crc32c_x86(crc, p, len);
    a0 = _mm256_xor_si256(KP_CRC32C_LOADY(p),
                          _mm256_set_epi64x(0, 0, 0, (long long)(uint32_t)~crc));
    a1 = KP_CRC32C_LOADY(p + 32);
    a2 = KP_CRC32C_LOADY(p + 64);
    a3 = KP_CRC32C_LOADY(p + 96);
    p += 128;
    len -= 128;
    for (;;) {
        n = len / step;
        if (n > KP_CRC32C_N) n = KP_CRC32C_N;
        cb = 8 * KP_CRC32C_M * n;
        c0 = c1 = c2 = 0;
        q0 = p + 128 * n;
        q1 = q0 + cb;
        q2 = q1 + cb;
        KP_CRC32C_STEPY(k, _mm256_xor_si256(KP_CRC32C_LOADY(p), inj))
        for (i = 1; i < n; i++) {
            KP_CRC32C_STEPY(k128, KP_CRC32C_LOADY(p))
        }
        p = q2;
        len -= n * step;
        if (len < step) break;
        inj = _mm256_inserti128_si256(_mm256_setzero_si256(),
                                      kp_crc32c_inject(kp_crc32c_lay.inj, c0, c1, c2), 0);
        k = KP_CRC32C_BCASTY(kp_crc32c_lay.jump);
    }
    /* a0..a2 over 96, 64, 32 bytes onto a3, then its low lane over 16 onto its high lane. */
    a3 = KP_CRC32C_FOLDY(a0, KP_CRC32C_BCASTY(kp_crc32c_fold_k[5]), a3);
    a3 = KP_CRC32C_FOLDY(a1, KP_CRC32C_BCASTY(kp_crc32c_fold_k[3]), a3);
    a3 = KP_CRC32C_FOLDY(a2, KP_CRC32C_BCASTY(kp_crc32c_fold_k[1]), a3);
    x = KP_CRC32C_FOLDX(_mm256_castsi256_si128(a3),
                        _mm_loadu_si128((const __m128i *)kp_crc32c_fold_k[0]),
                        _mm256_extracti128_si256(a3, 1));
    _mm256_zeroupper();      /* no dirty upper halves left for SSE code (Intel penalises it) */
    return kp_crc32c_x86(~kp_crc32c_finish(kp_crc32c_lay.fin[n], x, c0, c1, c2), p, len);
}
#endif /* KP_CRC32C_HAVE_VPCLMUL */

/* The x86 paths this CPU and OS can run, as kp_crc32c_avail bits. CPUID is read here rather
 * than through __builtin_cpu_supports, whose answers come from whichever libgcc or
 * compiler-rt the module links: older ones know no VPCLMULQDQ, and not every version checks
 * that the OS saves the ymm registers before reporting AVX2. */
static unsigned kp_crc32c_x86_avail(void) {
    unsigned int a, b, c, d, avail = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!((c >> 20) & 1)) return 0;                                 /* leaf 1 ECX: SSE4.2 */
    avail |= 1u << KP_CRC32C_SSE42;
#ifdef KP_CRC32C_HAVE_VPCLMUL
    {
        /* Leaf 1 ECX: PCLMULQDQ (bit 1), OSXSAVE (27: XGETBV may be used), AVX (28). XCR0 bits
         * 1 and 2: the OS saves and restores the xmm and ymm registers, without which ymm
         * code would see them clobbered by a context switch. Leaf 7 EBX bit 5: AVX2 (the
         * broadcast and lane moves); ECX bit 10: VPCLMULQDQ. */
        unsigned int xcr0_lo, xcr0_hi;
        if (((c >> 1) & 1) && ((c >> 27) & 1) && ((c >> 28) & 1)) {
            __asm__ __volatile__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
            (void)xcr0_hi;
            if ((xcr0_lo & 6) == 6 && __get_cpuid_max(0, 0) >= 7) {
                __cpuid_count(7, 0, a, b, c, d);
                if (((b >> 5) & 1) && ((c >> 10) & 1)) avail |= 1u << KP_CRC32C_VPCLMUL;
            }
        }
    }
#endif
    return avail;
}
#endif /* KP_CRC32C_HAVE_X86 */

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
    int impl;
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
    kp_crc32c_avail = 1u << KP_CRC32C_PORTABLE;
#ifdef KP_CRC32C_HAVE_X86
    kp_crc32c_avail |= kp_crc32c_x86_avail();
#endif
#ifdef KP_CRC32C_HAVE_VPCLMUL
    if (kp_crc32c_avail & (1u << KP_CRC32C_VPCLMUL)) kp_crc32c_fold_init();
#endif
#ifdef KP_CRC32C_HAVE_ARM
    if (getauxval(AT_HWCAP) & HWCAP_CRC32) kp_crc32c_avail |= 1u << KP_CRC32C_ARM;
#endif
    for (impl = KP_CRC32C_NIMPL - 1; !((kp_crc32c_avail >> impl) & 1); impl--) continue;
    kp_crc32c_impl = impl;
}

/* The CRC of p[0:len] continued from crc, by implementation impl, which must be one this
 * build and CPU can run (a bit of kp_crc32c_avail; the caller checks). */
static inline uint32_t kp_crc32c_with(int impl, uint32_t crc, const unsigned char *p,
                                      size_t len) {
    switch (impl) {
#ifdef KP_CRC32C_HAVE_VPCLMUL
    case KP_CRC32C_VPCLMUL: return kp_crc32c_vpclmul(crc, p, len);
#endif
#ifdef KP_CRC32C_HAVE_X86
    case KP_CRC32C_SSE42: return kp_crc32c_x86(crc, p, len);
#endif
#ifdef KP_CRC32C_HAVE_ARM
    case KP_CRC32C_ARM: return kp_crc32c_arm(crc, p, len);
#endif
    default: return kp_crc32c_sw(crc, p, len);
    }
}

static uint32_t kp_crc32c(uint32_t crc, const unsigned char *p, size_t len) {
    return kp_crc32c_with(kp_crc32c_impl, crc, p, len);
}

/* The names kafkapy._records reports (_crc32c_implementation, _crc32c_paths). */
static inline const char *kp_crc32c_name(int impl) {
    switch (impl) {
    case KP_CRC32C_VPCLMUL: return "sse4.2+vpclmul";
    case KP_CRC32C_SSE42: return "sse4.2";
    case KP_CRC32C_ARM: return "armv8-crc";
    default: return "portable";
    }
}

#endif /* KAFKAPY_CRC32C_H */
