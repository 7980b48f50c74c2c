/* fuzz_policy_spec: libFuzzer target for policy specs as `--policy` and
 * bench suites give them ('fairshare(half_life_s=3600)+easy+pack', ...):
 * the registry's parser and every component's create(). A spec is accepted
 * (and destroyed cleanly) or refused with a NUL-terminated message; never a
 * crash. Build and run: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policies/registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    const struct policy_ops *ops = NULL;
    void *state = NULL;
    char msg[256];
    memset(msg, 'x', sizeof msg);
    int rc = policy_registry_create(spec, &ops, &state, msg, sizeof msg);
    if (rc == 0) {
        if (!ops || !ops->name)
            abort();
        (void)policy_registry_decision_kinds(ops, state);
        ops->destroy(state);
    } else if (!memchr(msg, '\0', sizeof msg) || !msg[0]) {
        abort(); /* a refusal says why, within the buffer */
    }
    free(spec);
    return 0;
}
