/* The PGAS C API from a C11 program: every call once, results checked, and
 * errors returned as status codes with a message (never an abort).
 * Run: mpiexec -n N taskgrid-pgas-c-check; prints "pgas c api: ok" on rank 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskgrid/pgas.h"

static int me = 0;

#define CHECK(condition)                                                                     \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      char message[256];                                                                     \
      snprintf(message, sizeof message, "pgas c check failed at line %d: %s (%s)", __LINE__, \
               #condition, tg_last_error());                                                 \
      tg_pgas_abort_job(message);                                                            \
    }                                                                                        \
  } while (0)

int main(int argc, char** argv) {
  int ranks = 0;
  CHECK(tg_pgas_init(&argc, &argv, 1 << 20) == TG_SUCCESS);
  CHECK(tg_pgas_rank(&me) == TG_SUCCESS && tg_pgas_num_ranks(&ranks) == TG_SUCCESS);
  const int right = (me + 1) % ranks, left = (me + ranks - 1) % ranks;

  /* Symmetric memory: put to the right, get from the left. */
  tg_pgas_memory m;
  CHECK(tg_pgas_alloc(16 * sizeof(double), &m) == TG_SUCCESS);
  double* mine = NULL;
  CHECK(tg_pgas_local(m, (void**)&mine) == TG_SUCCESS && mine != NULL);
  double values[16];
  for (int i = 0; i < 16; ++i) values[i] = me * 100.0 + i;
  CHECK(tg_pgas_put(right, m, 0, values, 8 * sizeof(double)) == TG_SUCCESS);
  tg_pgas_operation op;
  memset(&op, 0, sizeof op);
  CHECK(tg_pgas_put_nb(right, m, 8 * sizeof(double), values + 8, 8 * sizeof(double), &op) ==
        TG_SUCCESS);
  CHECK(tg_pgas_wait(&op) == TG_SUCCESS);
  CHECK(tg_pgas_barrier(tg_pgas_world()) == TG_SUCCESS);
  for (int i = 0; i < 16; ++i) CHECK(mine[i] == left * 100.0 + i);
  double got[4] = {0, 0, 0, 0};
  CHECK(tg_pgas_get_nb(got, left, m, 2 * sizeof(double), sizeof got, &op) == TG_SUCCESS);
  CHECK(tg_pgas_fence() == TG_SUCCESS && tg_pgas_wait(&op) == TG_SUCCESS);
  for (int i = 0; i < 4; ++i) CHECK(got[i] == ((left + ranks - 1) % ranks) * 100.0 + 2 + i);
  CHECK(tg_pgas_get(got, right, m, 0, sizeof(double)) == TG_SUCCESS && got[0] == me * 100.0);
  /* Every other element, strided. */
  double evens[8];
  CHECK(tg_pgas_get_strided(evens, sizeof(double), left, m, 0, 2 * sizeof(double), sizeof(double),
                            8) == TG_SUCCESS);
  for (int i = 0; i < 8; ++i) CHECK(evens[i] == ((left + ranks - 1) % ranks) * 100.0 + 2 * i);
  CHECK(tg_pgas_barrier(tg_pgas_world()) == TG_SUCCESS);
  CHECK(tg_pgas_put_strided(right, m, sizeof(double), 2 * sizeof(double), values, sizeof(double),
                            sizeof(double), 8) == TG_SUCCESS);
  CHECK(tg_pgas_barrier(tg_pgas_world()) == TG_SUCCESS);
  for (int i = 0; i < 8; ++i) CHECK(mine[2 * i + 1] == left * 100.0 + i);

  /* Errors are codes with a message. */
  CHECK(tg_pgas_put(right, m, 16 * sizeof(double), values, 1) == TG_ERROR);
  CHECK(strstr(tg_last_error(), "are outside allocation") != NULL);
  CHECK(tg_pgas_local(m, NULL) == TG_ERROR_INVALID_ARGUMENT);
  CHECK(tg_pgas_broadcast(values, 1, (tg_pgas_type)42, 0, tg_pgas_world()) ==
        TG_ERROR_INVALID_ARGUMENT);

  /* Atomics and the lock. */
  tg_pgas_memory counter;
  CHECK(tg_pgas_alloc(2 * sizeof(int64_t), &counter) == TG_SUCCESS);
  int64_t* words = NULL;
  CHECK(tg_pgas_local(counter, (void**)&words) == TG_SUCCESS);
  words[0] = words[1] = 0;
  CHECK(tg_pgas_barrier(tg_pgas_world()) == TG_SUCCESS);
  for (int i = 0; i < 50; ++i) CHECK(tg_pgas_fetch_add(0, counter, 0, 2, NULL) == TG_SUCCESS);
  CHECK(tg_pgas_lock(0) == TG_SUCCESS);
  int64_t value = 0, old = -1;
  CHECK(tg_pgas_atomic_load(0, counter, 8, &value) == TG_SUCCESS);
  CHECK(tg_pgas_compare_swap(0, counter, 8, value, value + 1, &old) == TG_SUCCESS && old == value);
  CHECK(tg_pgas_unlock(0) == TG_SUCCESS);
  CHECK(tg_pgas_unlock(0) == TG_ERROR && strstr(tg_last_error(), "does not hold") != NULL);
  CHECK(tg_pgas_barrier(tg_pgas_world()) == TG_SUCCESS);
  CHECK(tg_pgas_atomic_load(0, counter, 0, &value) == TG_SUCCESS && value == 100 * ranks);
  CHECK(tg_pgas_atomic_load(0, counter, 8, &value) == TG_SUCCESS && value == ranks);
  CHECK(tg_pgas_barrier(tg_pgas_world()) == TG_SUCCESS); /* all have read rank 0's words */
  CHECK(tg_pgas_atomic_store(me, counter, 0, me) == TG_SUCCESS);

  /* Groups and collectives. */
  tg_pgas_group parity, merged, listed, none = {0};
  CHECK(tg_pgas_split(tg_pgas_world(), me % 2, me, &parity) == TG_SUCCESS);
  int size = 0, rank = -1, world_rank = -1;
  CHECK(tg_pgas_group_size(parity, &size) == TG_SUCCESS && size == (ranks + 1 - me % 2) / 2);
  CHECK(tg_pgas_group_rank(parity, &rank) == TG_SUCCESS && rank == me / 2);
  CHECK(tg_pgas_group_world_rank(parity, rank, &world_rank) == TG_SUCCESS && world_rank == me);
  int sum = 0, one = 1;
  CHECK(tg_pgas_allreduce(&one, &sum, 1, TG_PGAS_INT32, TG_PGAS_SUM, parity) == TG_SUCCESS);
  CHECK(sum == size);
  CHECK(tg_pgas_merge(me % 2 == 0 ? parity : none, me % 2 ? parity : none, &merged) == TG_SUCCESS);
  CHECK(tg_pgas_group_size(merged, &size) == TG_SUCCESS && size == ranks);
  double maximum = 0, mine_value = me;
  CHECK(tg_pgas_reduce(&mine_value, &maximum, 1, TG_PGAS_DOUBLE, TG_PGAS_MAX, 0, merged) ==
        TG_SUCCESS);
  if (me == 0) CHECK(maximum == ranks - 1);
  int64_t token = me == ranks - 1 ? 4242 : 0;
  CHECK(tg_pgas_broadcast(&token, 1, TG_PGAS_INT64, ranks - 1, tg_pgas_world()) == TG_SUCCESS);
  CHECK(token == 4242);
  int everyone[64];
  for (int i = 0; i < ranks && i < 64; ++i) everyone[i] = i;
  CHECK(tg_pgas_create_group(everyone, ranks, &listed) == TG_SUCCESS);
  CHECK(tg_pgas_barrier(listed) == TG_SUCCESS);
  CHECK(tg_pgas_free_group(&listed) == TG_SUCCESS && listed.id == 0);
  CHECK(tg_pgas_free_group(&merged) == TG_SUCCESS);
  CHECK(tg_pgas_free_group(&parity) == TG_SUCCESS);

  /* Asymmetric memory, zero bytes on rank 0. */
  tg_pgas_memory parts;
  CHECK(tg_pgas_alloc_asymmetric((size_t)me * 24, &parts) == TG_SUCCESS);
  size_t bytes = 1;
  CHECK(tg_pgas_size(parts, 0, &bytes) == TG_SUCCESS && bytes == 0);
  CHECK(tg_pgas_size(parts, ranks - 1, &bytes) == TG_SUCCESS && bytes == (size_t)(ranks - 1) * 24);

  CHECK(tg_pgas_free(parts) == TG_SUCCESS);
  CHECK(tg_pgas_free(counter) == TG_SUCCESS);
  CHECK(tg_pgas_free(m) == TG_SUCCESS);
  CHECK(tg_pgas_free(m) == TG_ERROR && strstr(tg_last_error(), "was freed") != NULL);
  CHECK(tg_pgas_finalize() == TG_SUCCESS);
  if (me == 0) printf("pgas c api: ok on %d ranks\n", ranks);
  return 0;
}
