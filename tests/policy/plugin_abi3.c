/* A plugin built for ABI version 3 (before the queue's change record):
 * version 4 only added information to the view, so hosts still load it. */
#define PLUGIN_ABI 3u
#define PLUGIN_NAME "before-queue-records"
#include "tests/policy/plugin_bad_abi.c"
