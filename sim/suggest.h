/* suggest: "did you mean ...?" for misspelt keys and names. One edit
 * distance for every reader (scenarios, traces, bench suites, the agent's
 * config), so they agree on what counts as a typo. (policies/ keeps its own:
 * it may include nothing outside its folder.)
 */
#ifndef FLEETSIM_SIM_SUGGEST_H
#define FLEETSIM_SIM_SUGGEST_H

#include <stddef.h>

/* Levenshtein distance, case ignored; SIZE_MAX for words over 64 bytes (no
 * key is that long, so nothing is suggested). */
size_t suggest_distance(const char *a, const char *b);

#endif
