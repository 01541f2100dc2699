# native/derive.c (cryptopay_derive.node): BIP-32 public children in batches for serve's address
# derivation thread, on libsecp256k1's own field and group code, compiled in from the sources the
# `secp256k1` package ships, with the settings of that package's addon. Built by `npm ci`
# (package.json "install"); where it cannot be, derivation uses libsecp256k1's tweak-add as before.
{
  'targets': [
    {
      'target_name': 'cryptopay_derive',
      'sources': ['native/derive.c'],
      'include_dirs': [
        'node_modules/secp256k1/src/secp256k1',
        'node_modules/secp256k1/src/secp256k1/src',
      ],
      'cflags': ['-O2', '-fvisibility=hidden', '-Wno-unused-function', '-Wno-nonnull-compare', '-Wno-unused-parameter'],
      'defines': [
        'ECMULT_GEN_PREC_BITS=4',
        'ECMULT_WINDOW_SIZE=15',
        'USE_NUM_NONE=1',
        'USE_FIELD_INV_BUILTIN=1',
        'USE_SCALAR_INV_BUILTIN=1',
      ],
      'conditions': [
        ['target_arch=="x64" and OS!="win"', {
          'defines': ['HAVE___INT128=1', 'USE_ASM_X86_64=1', 'USE_FIELD_5X52=1', 'USE_SCALAR_4X64=1'],
        }, {
          'defines': ['USE_FIELD_10X26=1', 'USE_SCALAR_8X32=1'],
        }],
      ],
    },
  ],
}
