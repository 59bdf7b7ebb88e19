"""String hashes as TensorFlow computes them, in pure Python: FarmHash Fingerprint64
(farmhashna::Hash64, behind `StringToHashBucketFast` and Keras's Hashing layer) and keyed
SipHash-2-4 (behind `StringToHashBucketStrong`), and FingerprintCat64 (behind
`SparseCrossHashed`).

Owns: `fingerprint64(bytes) -> int`, `siphash24(key0, key1, bytes) -> int` and
`fingerprint_cat64(int, int) -> int` (unsigned 64-bit).
Invariant: values equal TensorFlow's for every input (tests/tf_compare check them).
"""
_M = (1 << 64) - 1
_K0 = 0xc3a5c85c97cb3127
_K1 = 0xb492b66fbe98f273
_K2 = 0x9ae16a3b2f90404f


def _f64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _f32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _rot(v, r):
    return ((v >> r) | (v << (64 - r))) & _M if r else v


def _shift_mix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_f64(s, 0) + _K2) & _M
        b = _f64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _len16((n + (_f32(s, 0) << 3)) & _M, _f32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _mix_ends(s, n, k):
    """The mixing both 17..64-byte cases start with, from the first and the last 16 bytes
    (`k` multiplies the first word): (mul, a, and the two words _len16 combines)."""
    mul = _K2 + n * 2
    a = (_f64(s, 0) * k) & _M
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & _M
    d = (_f64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    return mul, a, y, (a + _rot((b + _K2) & _M, 18) + c) & _M


def _len17to32(s, n):
    mul, _, y, x = _mix_ends(s, n, _K1)
    return _len16(y, x, mul)


def _len33to64(s, n):
    mul, a, y, x = _mix_ends(s, n, _K2)
    z = _len16(y, x, mul)
    e = (_f64(s, 16) * mul) & _M
    f = _f64(s, 24)
    g = ((y + _f64(s, n - 32)) * mul) & _M
    h = ((z + _f64(s, n - 24)) * mul) & _M
    return _len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                  (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak(s, i, a, b):
    w, x, y, z = _f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(s):
    """FarmHash Fingerprint64 of the bytes `s`, an unsigned 64-bit int."""
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _f64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v1 + _f64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w1
        y = (y + v0 + _f64(s, i + 40)) & _M
        z = (_rot((z + w0) & _M, 33) * _K1) & _M
        v0, v1 = _weak(s, i, (v1 * _K1) & _M, (x + w0) & _M)
        w0, w1 = _weak(s, i + 32, (z + w1) & _M, (y + _f64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xff) << 1)
    i = last64
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    x = (_rot((x + y + v0 + _f64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _f64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M
    y = (y + v0 * 9 + _f64(s, i + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak(s, i, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak(s, i + 32, (z + w1) & _M, (y + _f64(s, i + 16)) & _M)
    z, x = x, z
    return _len16((_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _M,
                  (_len16(v1, w1, mul) + x) & _M, mul)


_SIP = (0x736f6d6570736575, 0x646f72616e646f6d, 0x6c7967656e657261, 0x7465646279746573)


def _rotl(v, r):
    return ((v << r) | (v >> (64 - r))) & _M


def _sip_rounds(v, n):
    v0, v1, v2, v3 = v
    for _ in range(n):
        v0 = (v0 + v1) & _M
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & _M
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & _M
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & _M
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    return [v0, v1, v2, v3]


def siphash24(key0, key1, s):
    """SipHash-2-4 of bytes `s` under the 128-bit key (key0, key1), as highwayhash::SipHash
    (TensorFlow's StrongKeyedHash)."""
    key0, key1 = key0 & _M, key1 & _M
    v = [key0 ^ _SIP[0], key1 ^ _SIP[1], key0 ^ _SIP[2], key1 ^ _SIP[3]]
    n = len(s)
    full = n - n % 8
    for i in range(0, full, 8):
        m = _f64(s, i)
        v[3] ^= m
        v = _sip_rounds(v, 2)
        v[0] ^= m
    m = int.from_bytes(s[full:], "little") | ((n & 0xff) << 56)
    v[3] ^= m
    v = _sip_rounds(v, 2)
    v[0] ^= m
    v[2] ^= 0xff
    v = _sip_rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


_KMUL = 0xC6A4A7935BD1E995


def fingerprint_cat64(fp1, fp2):
    """TensorFlow's FingerprintCat64: two unsigned 64-bit fingerprints combined into one
    (the order matters), as `tf.sparse.cross_hashed` chains its features."""
    result = fp1 ^ _KMUL
    result ^= (_shift_mix((fp2 * _KMUL) & _M) * _KMUL) & _M
    result = (result * _KMUL) & _M
    result = (_shift_mix(result) * _KMUL) & _M
    return _shift_mix(result)
