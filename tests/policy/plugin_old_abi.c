/* A plugin built for ABI version 1 (before GPU fractions and GPU-model
 * constraints): hosts must refuse it, saying what version 2 added. */
#define PLUGIN_ABI 1u
#define PLUGIN_NAME "from-the-past"
#include "tests/policy/plugin_bad_abi.c"
