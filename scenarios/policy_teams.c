#include "scenarios/policy_teams.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/suggest.h"

static int is_number(const char *s, size_t n)
{
    char buf[64];
    if (!n || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    strtod(buf, &end);
    return end == buf + n;
}

int policy_teams_resolve(const struct workload_spec *w, const char *spec, char *out, size_t len, char *msg,
                         size_t msg_len)
{
    size_t o = 0;
    for (const char *p = spec; *p;) {
        int item_start = p > spec && (p[-1] == '=' || p[-1] == ';');
        size_t key = item_start ? strcspn(p, ":;,()=+") : 0;
        if (item_start && p[key] == ':' && !is_number(p, key)) {
            size_t t = 0, best = 0, best_d = (size_t)-1;
            while (t < w->n_teams && !(strlen(w->teams[t].name) == key && strncmp(w->teams[t].name, p, key) == 0))
                t++;
            if (t == w->n_teams) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)key, p);
                for (size_t k = 0; k < w->n_teams; k++) {
                    size_t d = suggest_distance(w->teams[k].name, name);
                    if (d < best_d) {
                        best_d = d;
                        best = k;
                    }
                }
                if (w->n_teams && best_d <= 2)
                    snprintf(msg, msg_len, "policy '%s' names team '%s', which the workload does not have; did you "
                                           "mean '%s'?",
                             spec, name, w->teams[best].name);
                else
                    snprintf(msg, msg_len, "policy '%s' names team '%s', which the workload does not have", spec,
                             name);
                return -1;
            }
            int n = snprintf(out + o, o < len ? len - o : 0, "%zu", t);
            o += n > 0 ? (size_t)n : 0;
            p += key;
            continue;
        }
        if (o + 1 < len)
            out[o] = *p;
        o++;
        p++;
    }
    if (o >= len) {
        snprintf(msg, msg_len, "policy '%s' is too long", spec);
        return -1;
    }
    out[o] = '\0';
    return 0;
}
