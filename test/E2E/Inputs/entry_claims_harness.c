/*===- entry_claims_harness.c - one context, one arena, one entry at a time -===*
 *
 * Links examples/copy compiled with `txc --emit=obj` and calls its
 * `encode` entry from two threads. One context runs one entry at a time,
 * and an activation arena holds one call's intermediate tensors: a
 * tester's four threads on one context got wrong outputs with status 0.
 * An entry now claims its context and arena (txrt_check_entry) until its
 * exit (txrt_entry_done). The main thread holds each claim (a
 * txrt_check_entry call of its own, as an entry running there would) while
 * a second thread calls the entry: refused with the problem named. After
 * the release the same call works, a context passed from thread to thread
 * works, and four threads with a context and an arena each run at once
 * without a refusal and with the one-thread outputs. Prints one line per
 * check.
 *
 *===----------------------------------------------------------------------===*/
#include "model.h"
#include "txrt/txrt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kB = 2, kS = 5, kD = 64, kThreads = 4, kCalls = 50 };

static void *zeroed(size_t bytes) {
  void *memory = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory)
    memset(memory, 0, bytes);
  return memory;
}

static void *params;
static int32_t src[kB * kS];
static const int64_t dims[] = {kB, kS, 1, 1};

struct call {
  txrt_context *ctx;
  void *arena;
  float out[kB * kS * kD];
  int32_t status;
  char error[512];
  int failures;
};

static int32_t encode(struct call *c) {
  void *inputs[] = {src};
  void *outputs[] = {c->out};
  c->status = txc_entry_encode(c->ctx, params, c->arena, dims, inputs,
                               outputs);
  snprintf(c->error, sizeof(c->error), "%s",
           c->status ? txrt_last_error(c->ctx) : "");
  return c->status;
}

static void *once(void *arg) {
  encode((struct call *)arg);
  return NULL;
}

static void *many(void *arg) {
  struct call *c = arg;
  for (int i = 0; i < kCalls; ++i)
    c->failures += encode(c) != 0;
  return NULL;
}

/* Runs one encode call on another thread and prints its status. */
static void elsewhere(const char *what, txrt_context *ctx, void *arena) {
  static struct call c;
  c.ctx = ctx;
  c.arena = arena;
  pthread_t thread;
  pthread_create(&thread, NULL, once, &c);
  pthread_join(thread, NULL);
  printf("%s: status %d%s%s\n", what, (int)c.status, c.status ? ": " : "",
         c.error);
}

/* What an entry running on this thread holds: the claim of its check. */
static txrt_status hold(txrt_context *ctx, void *arena) {
  void *inputs[] = {src};
  static float out[kB * kS * kD];
  void *outputs[] = {out};
  return txrt_check_entry(ctx, NULL, NULL, NULL, 0, arena,
                          (int64_t)TXC_ENCODE_ARENA_BYTES, (const void **)inputs,
                          1, (const void **)outputs, 1, params, 0);
}

int main(void) {
  txrt_context *ctx, *other;
  if (txrt_context_create_with_threads(1, &ctx) != TXRT_OK ||
      txrt_context_create_with_threads(1, &other) != TXRT_OK)
    return 1;
  params = zeroed(TXC_PARAM_ARENA_BYTES);
  void *arena = zeroed(TXC_ENCODE_ARENA_BYTES);
  void *arena2 = zeroed(TXC_ENCODE_ARENA_BYTES);
  if (!params || !arena || !arena2)
    return 1;
  float *p = params;
  for (size_t i = 0; i < TXC_PARAM_ARENA_BYTES / sizeof(float); ++i)
    p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  for (int i = 0; i < kB * kS; ++i)
    src[i] = 4 + i % 5;

  printf("hold context: status %d\n", (int)hold(ctx, arena));
  elsewhere("same context", ctx, arena2);
  elsewhere("same arena", other, arena);
  elsewhere("neither", other, arena2);
  txrt_entry_done(ctx, arena);
  elsewhere("released", ctx, arena);

  /* A context destroyed while a claim of it is held (the caller's own
   * txrt_check_entry, never released): one created after it, often at
   * its address, is free. */
  {
    txrt_context *doomed;
    txrt_context_create_with_threads(1, &doomed);
    hold(doomed, NULL);
    txrt_context_destroy(doomed);
    txrt_context *reborn;
    txrt_context_create_with_threads(1, &reborn);
    elsewhere("after destroy", reborn, arena2);
    txrt_context_destroy(reborn);
  }

  /* Every thread its own context and arena, at once. */
  struct call *calls = calloc(kThreads, sizeof(struct call));
  struct call *reference = calloc(1, sizeof(struct call));
  reference->ctx = ctx;
  reference->arena = arena;
  encode(reference);
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    txrt_context_create_with_threads(1, &calls[t].ctx);
    calls[t].arena = zeroed(TXC_ENCODE_ARENA_BYTES);
    pthread_create(&threads[t], NULL, many, &calls[t]);
  }
  int failures = 0, differ = 0;
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    failures += calls[t].failures;
    differ += memcmp(calls[t].out, reference->out, sizeof(reference->out)) != 0;
  }
  printf("own contexts: %d refused, %d differ\n", failures, differ);
  return 0;
}
