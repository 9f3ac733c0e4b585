/* Includes a generated header as ISO C (entry-checks test). */
#include "model.h"

int main(void) { return TXC_TRAIN_ARENA_BYTES > 0 ? 0 : 1; }
