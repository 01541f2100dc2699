/*
 * BIP-32 public child keys in batches, for serve's address derivation thread
 * (src/chains/ckd.ts). A child is IL·G + K: libsecp256k1's own tweak-add does IL·G as a general
 * multiplication (~22-40 µs here), where G is fixed and IL is public data, so a table of
 * d·256^w·G (every byte digit d of every window w: 8,160 affine points, built once per process)
 * makes it at most 32 mixed additions, and the children of a batch share one inversion back to
 * affine coordinates. No secret is ever handled here: an xpub's children are public.
 *
 * The arithmetic is libsecp256k1's own, compiled in from the sources that the `secp256k1`
 * package ships (its field, group and scalar code, with the same settings as its addon): nothing
 * here computes on field elements by hand. Those are the library's internal functions, so
 * package.json pins `secp256k1` to one version (5.0.2): a new one is to be read before it is taken. Its variable-time functions handle every case of an
 * addition (a doubling, a sum at infinity).
 */
#include <node_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "secp256k1.c"

#define WINDOWS 32
#define DIGITS 255

/* table[w * DIGITS + d - 1] = d·256^w·G */
static secp256k1_ge *table = NULL;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
  secp256k1_gej *jac = malloc(sizeof(secp256k1_gej) * WINDOWS * DIGITS);
  secp256k1_ge *t = malloc(sizeof(secp256k1_ge) * WINDOWS * DIGITS);
  if (jac == NULL || t == NULL) {
    free(jac);
    free(t);
    return;
  }
  secp256k1_gej base;
  secp256k1_gej_set_ge(&base, &secp256k1_ge_const_g);
  for (int w = 0; w < WINDOWS; w++) {
    secp256k1_gej *row = jac + (size_t)w * DIGITS;
    row[0] = base;
    for (int d = 2; d <= DIGITS; d++) secp256k1_gej_add_var(&row[d - 1], &row[d - 2], &base, NULL);
    /* 256·base: the next window's unit. */
    secp256k1_gej_add_var(&base, &row[DIGITS - 1], &base, NULL);
  }
  secp256k1_ge_set_all_gej_var(t, jac, (size_t)WINDOWS * DIGITS);
  free(jac);
  table = t;
}

static napi_value fail(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

/* The bytes of a Uint8Array argument, or NULL. */
static unsigned char *bytes_of(napi_env env, napi_value v, size_t *length) {
  napi_typedarray_type type;
  void *data;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, length, &data, &buffer, &offset) != napi_ok || type != napi_uint8_array) return NULL;
  /* V8 gives an empty array no data pointer. */
  static unsigned char none;
  return data != NULL ? data : &none;
}

/*
 * deriveChildren(parent, tweaks, out, ok): parent is the 65-byte uncompressed public key K;
 * tweaks holds n IL values of 32 bytes (big-endian); out receives n uncompressed keys without
 * their 0x04 (x then y, 64 bytes each); ok[i] is 1, or 0 where child i is invalid (IL >= n,
 * or IL·G + K at infinity: BIP-32's two cases, where out holds zeros).
 */
static napi_value derive_children(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4) return fail(env, "deriveChildren(parent, tweaks, out, ok)");
  size_t parent_len, tweaks_len, out_len, ok_len;
  unsigned char *parent = bytes_of(env, argv[0], &parent_len);
  unsigned char *tweaks = bytes_of(env, argv[1], &tweaks_len);
  unsigned char *out = bytes_of(env, argv[2], &out_len);
  unsigned char *ok = bytes_of(env, argv[3], &ok_len);
  if (parent == NULL || tweaks == NULL || out == NULL || ok == NULL) return fail(env, "deriveChildren takes four Uint8Arrays");
  size_t n = tweaks_len / 32;
  if (parent_len != 65 || parent[0] != 4 || tweaks_len % 32 != 0 || out_len != n * 64 || ok_len != n) return fail(env, "deriveChildren: wrong lengths");
  secp256k1_ge k;
  if (!secp256k1_eckey_pubkey_parse(&k, parent, 65)) return fail(env, "deriveChildren: the parent key is not a point of the curve");
  pthread_once(&table_once, build_table);
  if (table == NULL) return fail(env, "deriveChildren: out of memory for the table");
  if (n == 0) return NULL;
  /* The flags are kept here and copied out last, and every tweak is read before out is
   * written: arrays that share memory give the same answers as separate ones. */
  secp256k1_gej *acc = malloc(sizeof(secp256k1_gej) * n);
  secp256k1_ge *children = malloc(sizeof(secp256k1_ge) * n);
  unsigned char *valid = malloc(n);
  if (acc == NULL || children == NULL || valid == NULL) {
    free(acc);
    free(children);
    free(valid);
    return fail(env, "deriveChildren: out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    const unsigned char *il = tweaks + 32 * i;
    secp256k1_scalar s;
    int overflow = 0;
    secp256k1_scalar_set_b32(&s, il, &overflow);
    secp256k1_gej_set_infinity(&acc[i]);
    if (overflow) {
      valid[i] = 0;
      continue;
    }
    /* Window w is byte 31 - w of the big-endian IL. */
    for (int w = 0; w < WINDOWS; w++) {
      unsigned int d = il[31 - w];
      if (d != 0) secp256k1_gej_add_ge_var(&acc[i], &acc[i], &table[(size_t)w * DIGITS + d - 1], NULL);
    }
    secp256k1_gej_add_ge_var(&acc[i], &acc[i], &k, NULL);
    valid[i] = secp256k1_gej_is_infinity(&acc[i]) ? 0 : 1;
  }
  secp256k1_ge_set_all_gej_var(children, acc, n);
  for (size_t i = 0; i < n; i++) {
    if (!valid[i]) {
      memset(out + 64 * i, 0, 64);
      continue;
    }
    secp256k1_fe_normalize_var(&children[i].x);
    secp256k1_fe_normalize_var(&children[i].y);
    secp256k1_fe_get_b32(out + 64 * i, &children[i].x);
    secp256k1_fe_get_b32(out + 64 * i + 32, &children[i].y);
  }
  memcpy(ok, valid, n);
  free(acc);
  free(children);
  free(valid);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "deriveChildren", NAPI_AUTO_LENGTH, derive_children, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "deriveChildren", fn) != napi_ok) return NULL;
  return exports;
}
