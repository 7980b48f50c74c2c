/* suites.h: the list of unit-test suites, one per module under test. */
#ifndef FLEETSIM_TESTS_UNIT_SUITES_H
#define FLEETSIM_TESTS_UNIT_SUITES_H

void suite_pcg32(void);
void suite_engine(void);
void suite_policies(void);
void suite_policy_library(void);
void suite_simulation(void);
void suite_swf(void);
void suite_jsonl(void);
void suite_models(void);
void suite_forecast(void);
void suite_units(void);
void suite_scenario(void);
void suite_synth(void);
void suite_fit(void);
void suite_sacct(void);
void suite_plan(void);
void suite_gputrace(void);
void suite_atomic_file(void);
void suite_gpu_share(void);
void suite_contention(void);
void suite_profile(void);
void suite_profile_tiny_blocks(void);
void suite_child(void);
void suite_shape(void);
void suite_placement_index(void);
void suite_queue_index(void);
void suite_promises(void);
void suite_kept_order(void);
void suite_promise_order(void);
void suite_radix_sort(void);
void suite_length_bounds(void);
void suite_summary(void);
void suite_buffers(void);
void suite_json_doc(void);

static void (*const test_suites[])(void) = {
    suite_pcg32, suite_engine, suite_policies, suite_policy_library, suite_simulation, suite_swf, suite_jsonl, suite_models, suite_forecast, suite_units,
    suite_scenario, suite_synth, suite_fit, suite_sacct, suite_plan, suite_gputrace, suite_atomic_file, suite_gpu_share, suite_contention, suite_profile, suite_profile_tiny_blocks, suite_child, suite_shape, suite_placement_index, suite_queue_index, suite_promises,
    suite_promise_order, suite_kept_order,
    suite_radix_sort, suite_length_bounds, suite_summary, suite_buffers, suite_json_doc,
};

#endif
