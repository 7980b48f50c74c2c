/* A plugin built for ABI version 2 (before node shapes): hosts must refuse
 * it, saying what version 3 added. */
#define PLUGIN_ABI 2u
#define PLUGIN_NAME "before-shapes"
#include "tests/policy/plugin_bad_abi.c"
