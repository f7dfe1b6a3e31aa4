/* Copies of recent reads' candidates (see memo.h). */
#include "memo.h"

#include <stdlib.h>
#include <string.h>

/* An entry: a byte that says whether it holds a copy, a byte (in a set's
   first entry) naming the entry the set replaces next, padding to 8, the
   key, padding to 8, two groups.  Sets of two entries: a work package's
   keys seldom all find room in one-way sets (8 keys collide at 1024
   entries one time in 40). */
static size_t key_room(const rmadht *t) {
  return (t->layout.key_size + 7) & ~(size_t)7;
}

/* The first entry of item i's set. */
static unsigned char *set_of(rmadht *t, int i) {
  struct scratch *s = t->scratch;
  size_t k = (size_t)(s->place[i].tag >> 1) & (s->memo_n / 2 - 1);
  return s->memo + 2 * k * s->memo_entry;
}

/* The entry of item i that holds key, else NULL. */
static unsigned char *find(rmadht *t, int i, const unsigned char *key) {
  if (!t->scratch->memo) return NULL;
  unsigned char *e = set_of(t, i);
  for (int w = 0; w < 2; w++, e += t->scratch->memo_entry)
    if (e[0] && !memcmp(e + 8, key, t->layout.key_size)) return e;
  return NULL;
}

void memo_store(rmadht *t, int i, const unsigned char *key) {
  struct scratch *s = t->scratch;
  if (!s->memo) {
    s->memo_entry = 8 + key_room(t) + 2 * t->layout.group_bytes;
    size_t n = MEMO_ENTRIES;
    while (n > 2 && n * s->memo_entry > MEMO_BYTES) n /= 2;
    s->memo = calloc(n, s->memo_entry);
    if (!s->memo) return;
    s->memo_n = n;
  }
  unsigned char *e = find(t, i, key);
  if (!e) {
    unsigned char *set = set_of(t, i), *other = set + s->memo_entry;
    e = !set[0] ? set : !other[0] ? other : set[1] ? other : set;
    if (set[0] && other[0]) set[1] ^= 1;
  }
  e[0] = 1;
  memcpy(e + 8, key, t->layout.key_size);
  memcpy(e + 8 + key_room(t), batch_cand(t, i),
         (size_t)s->place[i].ngroups * t->layout.group_bytes);
}

int memo_take(rmadht *t, int i, const unsigned char *key) {
  unsigned char *e = find(t, i, key);
  if (!e) return 0;
  memcpy(batch_cand(t, i), e + 8 + key_room(t),
         (size_t)t->scratch->place[i].ngroups * t->layout.group_bytes);
  e[0] = 0;
  return 1;
}

void memo_drop(rmadht *t, int i, const unsigned char *key) {
  unsigned char *e = find(t, i, key);
  if (e) e[0] = 0;
}

void memo_clear(rmadht *t) {
  struct scratch *s = t->scratch;
  for (size_t k = 0; k < s->memo_n; k++) s->memo[k * s->memo_entry] = 0;
}
