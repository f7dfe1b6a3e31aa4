/*
 * A model of rmadht's lock-free slot protocol (src/lockfree.c on the RMA
 * path, src/node_local.c on the node-local path), checked with Spin.
 * docs/explanation/lockfree-protocol.md says what it proves and what it leaves out.
 *
 * Compile-time switches (spin -DNAME):
 *   NL            the node-local path (default: the RMA path)
 *   FIX_VERLAST   node-local: ver stored last, with release, after every
 *                 other store of the write (review fix "overlapping writes")
 *   FIX_WAIT      a writer claims only a slot whose last write is done
 *                 (never claimed, or claim == ver and consistent); else it
 *                 reads again (review fix "stale tags"; on the RMA path
 *                 part of the fix of its race)
 *   FIX_DIFF      RMA: a write puts only the bytes that differ from the
 *                 copy it read, so every byte still in flight differs from
 *                 the one it replaces (the RMA race fix)
 *   RESTORE       RMA: a chunk of a put that has landed may land again,
 *                 with the same value, at any moment until the put is
 *                 complete (its writer's next flush).  MPI defines the
 *                 target bytes only at completion; Open MPI over shared
 *                 memory puts with the origin's memcpy, and glibc stores a
 *                 short run twice (overlapping words), between which the
 *                 origin can be descheduled
 *   FIX_FLUSHVER  RMA: a write puts everything but ver, flushes (round trip
 *                 3: the put is complete, nothing of it can land again),
 *                 then sets ver by compare-and-swap, an atomic operation
 *                 that lands once, before the writer's next flush (the fix
 *                 of the RESTORE race; the whole entry is put, no diff)
 *   WAIT_LOOSE    FIX_WAIT as first written: a claimed slot whose copy
 *                 has stamp 0 (empty) counts as finished
 *   FRESH         the scenario starts from a never-written slot
 *   UPDATE        the scenario is two atomic increments of one key
 *                 (rmadht_update: value computed from the copy read in
 *                 round trip 1, a lost claim re-reads and recomputes)
 *   UPD_NOWAIT    UPDATE without its rule that an update of an absent key
 *                 waits while any candidate slot is busy
 *   REWRITE       writer 0 writes its key twice, the second time from the
 *                 copy its first write left (that copy with the entry it
 *                 put, src/memo.c), claiming while its first ver may still
 *                 be on its way
 *   REWRITE_NOCLAIM REWRITE, the second write putting into the slot its
 *                 copy shows as its own without claiming it again
 *   GUESS         RMA, FRESH: a write with no copy kept guesses a slot
 *                 and sends, beside its copy (in either order), a
 *                 compare-and-swap of that slot's claim from 0; a won
 *                 guess is its slot, or is given back as a tombstone
 *                 (the write's key being elsewhere, chosen freely here
 *                 since one slot has no elsewhere) before the write goes
 *                 on from its copy; a lost one goes on from the copy
 *   GUESS_ANY     GUESS, the guess taking the slot whatever its claim (a
 *                 fetch-and-add instead of a compare-and-swap from 0)
 *   NO_OWNER_CHECK drop the "one owner" assertion, so that the search goes
 *                 on to what the race does to the table
 *
 * A slot is a claim word and NC chunks (ver, stamp, check, key, value);
 * a chunk stands for one byte, or a run of bytes, of the real slot: stores
 * and puts land chunk by chunk in any order.  The checksum is exact: check
 * names the image it was computed from, and a copy is consistent iff its
 * ver, stamp, key and value equal that image's.
 */

#ifdef UPDATE
#define NS 2
#else
#define NS 1
#endif
#define NP 3      /* clients: two writers and a reader/remover */
#ifdef REWRITE
#define NOPS 2    /* operations per client */
#else
#define NOPS 1
#endif
#define NC 5      /* chunks of a slot */
#define NCP 6     /* pending stores per client: the chunks and the tag */
#define C_VER 0
#define C_STAMP 1
#define C_CHECK 2
#define C_KEY 3
#define C_VAL 4
#define C_TAG 5
#define MAXW 12   /* images (completed claims), 0 = the zero slot */
#define NK 3      /* keys 1..2 */
#define NV 4      /* values 1..3 */
#define NONE 255
#define LIVE_BIT 1
#define TOMB_BIT 2

#define OP_NONE 0
#define OP_READ 1
#define OP_WRITE 2
#define OP_REMOVE 3
#define OP_INC 4

byte claim[NS];
byte mem[NS * NC];
byte tag[NS];
byte img_ver[MAXW], img_stamp[MAXW], img_key[MAXW], img_val[MAXW];
byte nimg = 1;
bool written[NK * NV];  /* (key, value) pairs some write imaged */

/* Stores (RMA: bytes of a put) issued but not yet landed, per client;
   with RESTORE, landed chunks that may land again before completion. */
bool pend[NP * NCP];
bool redo[NP * NCP];
byte pval[NP * NCP];
byte pslot[NP];
byte npend[NP];
byte nredo[NP];
/* Ownership: from the successful claim until the write's last store; a
   writer may hold two on one slot, its first write's ver outstanding. */
byte owners[NS];
byte owned[NP];

byte clients_done = 0;
byte incs = 0;        /* increments stored */

byte opk[NP * NOPS], opkey[NP * NOPS], opval[NP * NOPS];

/* Copy macros: cc[j] the claim copy, CV(j, c) chunk c of slot j's copy. */
#define CV(j, c) cm[(j) * NC + (c)]
#define CONS(j) (CV(j, C_CHECK) != 0 && \
                 img_ver[CV(j, C_CHECK)] == CV(j, C_VER) && \
                 img_stamp[CV(j, C_CHECK)] == CV(j, C_STAMP) && \
                 img_key[CV(j, C_CHECK)] == CV(j, C_KEY) && \
                 img_val[CV(j, C_CHECK)] == CV(j, C_VAL))
#define EMPTYS(j) (CV(j, C_STAMP) == 0)
#define TORN(j) (!EMPTYS(j) && !CONS(j))
#define LIVE(j) (!EMPTYS(j) && CONS(j) && (CV(j, C_STAMP) & 3) == LIVE_BIT)
#define TOMB(j) (!EMPTYS(j) && CONS(j) && (CV(j, C_STAMP) & 3) == TOMB_BIT)
#define INFL(j) (cc[j] != CV(j, C_VER))
#define BUSY(j) (INFL(j) || TORN(j))
#define FREE(j) (cc[j] == 0 || (!INFL(j) && TOMB(j)))
#ifdef WAIT_LOOSE
#define CLAIMABLE(j) (cc[j] == 0 || (!INFL(j) && !TORN(j)))
#else
#define CLAIMABLE(j) (cc[j] == 0 || (!INFL(j) && (LIVE(j) || TOMB(j))))
#endif
#define EPOCH(j) (CV(j, C_STAMP) >> 2)
#ifdef GUESS
#define TOMBING tombing
#else
#define TOMBING 0
#endif

/* A blind write's guess of slot g: its claim from 0 to 1, or with
   GUESS_ANY from whatever it is to the next value. */
#ifdef GUESS_ANY
#define GUESS_CAS(g) atomic { expect = claim[g]; newc = expect + 1; \
  claim[g] = newc; ok = 1; take_owner(g) }
#else
#define GUESS_CAS(g) atomic { if \
  :: claim[g] == 0 -> expect = 0; newc = 1; claim[g] = 1; ok = 1; \
     take_owner(g) \
  :: else -> ok = 0 \
  fi }
#endif

/* Whether the new image equals the copy in chunk c (check: same content). */
#define SAME(j, c) ((c) == C_VER && newc == CV(j, C_VER) || \
    (c) == C_STAMP && stamp == CV(j, C_STAMP) || \
    (c) == C_KEY && k == CV(j, C_KEY) || \
    (c) == C_VAL && nv == CV(j, C_VAL) || \
    (c) == C_CHECK && newc == img_ver[CV(j, C_CHECK)] && \
        stamp == img_stamp[CV(j, C_CHECK)] && k == img_key[CV(j, C_CHECK)] && \
        nv == img_val[CV(j, C_CHECK)])

/* The slot's owners: two writers at once is the race. */
inline take_owner(s) {
#ifndef NO_OWNER_CHECK
  assert(owners[s] == 0 || owners[s] == owned[p] && pslot[p] == s);
#endif
  owners[s]++;
  owned[p]++
}

#if defined(NL) && defined(FIX_VERLAST)
#define NET_RELEASES 0
#else
#define NET_RELEASES 1
#endif
#if defined(RESTORE) && !defined(NL)
#define RESTORES 1
#else
#define RESTORES 0
#endif
#if defined(FIX_FLUSHVER) && !defined(NL)
#define FLUSHVER 1
#else
#define FLUSHVER 0
#endif

/* Round trip 1: copy every candidate slot (readers on the node-local path
   copy only those whose tag matches), one chunk at a time, so a copy can
   mix any landed and unlanded stores.  On the RMA path a get of a group
   with a put of ours outstanding flushes first (rma_get_group). */
inline copy_slots(reading) {
#ifndef NL
  (npend[p] == 0 && nredo[p] == 0);
#endif
  j = 0;
  do
  :: j < NS ->
#ifdef NL
     if
     :: reading -> ctag[j] = tag[j]
     :: else -> skip
     fi;
#endif
     cc[j] = claim[j];
     CV(j, C_VER) = mem[j * NC + C_VER];
     CV(j, C_STAMP) = mem[j * NC + C_STAMP];
     CV(j, C_CHECK) = mem[j * NC + C_CHECK];
     CV(j, C_KEY) = mem[j * NC + C_KEY];
     CV(j, C_VAL) = mem[j * NC + C_VAL];
     j++
  :: else -> break
  od;
  j = 0
}

/* search_key: the newest consistent live copy of k (found), or torn. */
inline search(reading) {
  found = NONE; istorn = 0; best = 0; j = 0;
  do
  :: j < NS ->
     ok = cc[j] != 0 && CV(j, C_KEY) == k;
#ifdef NL
     ok = ok && (!reading || ctag[j] == k);
#endif
     if
     :: ok ->
        if
        :: TORN(j) -> istorn = 1
        :: !TORN(j) && LIVE(j) && (found == NONE || EPOCH(j) > best) ->
           found = j; best = EPOCH(j)
        :: else -> skip
        fi
     :: else -> skip
     fi;
     j++
  :: else -> break
  od;
  j = 0; best = 0; ok = 0
}

/* choose_slot (search.c) and the writer's Lamport clock. */
inline choose() {
  j = 0;
  do
  :: j < NS -> if :: EPOCH(j) > clock -> clock = EPOCH(j) :: else -> skip fi; j++
  :: else -> break
  od;
  search(0);
  s = found;
  if
  :: s == NONE && opkind != OP_REMOVE ->
     j = 0;
     do
     :: j < NS && FREE(j) -> s = j; break
     :: j < NS && !FREE(j) -> j++
     :: j >= NS -> break
     od;
     /* Full: the oldest intact entry, busy slots last. */
     if
     :: s == NONE ->
        j = 0; best = 255;
        do
        :: j < NS -> if :: !BUSY(j) && EPOCH(j) < best -> s = j; best = EPOCH(j)
                        :: else -> skip fi; j++
        :: else -> break
        od;
        if
        :: s == NONE ->
           j = 0; best = 255;
           do
           :: j < NS -> if :: EPOCH(j) < best -> s = j; best = EPOCH(j)
                           :: else -> skip fi; j++
           :: else -> break
           od
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: else -> skip
  fi;
  j = 0; best = 0
}

/* A writer that must wait reads again until the slots change: a read of
   unchanged slots would decide the same, so the model blocks instead of
   spinning (same behaviours, fewer states). */
inline unchanged_wait() {
  (!(claim[0] == cc[0] && mem[C_VER] == CV(0, C_VER) &&
           mem[C_STAMP] == CV(0, C_STAMP) && mem[C_CHECK] == CV(0, C_CHECK) &&
           mem[C_KEY] == CV(0, C_KEY) && mem[C_VAL] == CV(0, C_VAL)
#if NS > 1
           && claim[1] == cc[1] && mem[NC + C_VER] == CV(1, C_VER) &&
           mem[NC + C_STAMP] == CV(1, C_STAMP) && mem[NC + C_CHECK] == CV(1, C_CHECK) &&
           mem[NC + C_KEY] == CV(1, C_KEY) && mem[NC + C_VAL] == CV(1, C_VAL)
#endif
           ))
}

proctype client(byte p) {
  byte i, opkind, k, v, nv, s, found, best, j, c, expect, newc, stamp, wid;
  byte clock, tries;
  bool istorn, ok, anybusy, kept;
#ifdef REWRITE_NOCLAIM
  bool fromcopy;
#endif
#ifdef GUESS
  bool tombing;
#endif
  byte cc[NS];
  byte cm[NS * NC];
#ifdef NL
  byte ctag[NS];
#endif
  i = 0;
  do
  :: i < NOPS ->
     d_step {
       opkind = opk[p * NOPS + i]; k = opkey[p * NOPS + i];
       v = opval[p * NOPS + i]; tries = 0
     };
     if
     :: opkind == OP_NONE -> skip
     :: opkind == OP_READ ->
        /* lf_read / nl_read: a torn match is read again, then missing. */
read_again:
        copy_slots(1);
        d_step { search(1) };
        if
        :: found != NONE ->
           assert(written[k * NV + CV(found, C_VAL)])
        :: found == NONE && istorn && tries < 1 -> tries++; goto read_again
        :: else -> skip
        fi
     :: opkind >= OP_WRITE ->
        if
        :: kept ->
           kept = 0;
#ifdef REWRITE_NOCLAIM
           fromcopy = 1;
#endif
           goto from_copy
        :: else -> skip
        fi;
#ifdef GUESS
        /* Round trip 1 of a blind write: the copy and the guess, which
           MPI does not order; the guess is one atomic step and only the
           copy's claim word can see it, so the two orders cover all. */
        s = NS - 1;
        if
        :: GUESS_CAS(s); copy_slots(0)
        :: copy_slots(0); GUESS_CAS(s)
        fi;
        if
        :: !ok -> goto from_copy
        :: else -> skip
        fi;
        d_step { choose(); nv = v; s = NS - 1 };
        if
        :: tombing = 1; nv = 0
        :: found == NONE -> skip
        fi;
        goto claimed;
#endif
write_again:
#ifdef REWRITE_NOCLAIM
        fromcopy = 0;
#endif
        copy_slots(0);
from_copy:
        skip;
        d_step {
          choose();
          nv = v;
          anybusy = 0;
          j = 0;
          do
          :: j < NS -> anybusy = anybusy || !CLAIMABLE(j); j++
          :: else -> break
          od;
          j = 0;
          if
          :: opkind == OP_INC && found != NONE -> nv = CV(found, C_VAL) + 1
          :: opkind == OP_INC && found == NONE -> nv = 1
          :: opkind == OP_REMOVE -> nv = 0
          :: else -> skip
          fi
        };
        if
        :: opkind == OP_REMOVE && s == NONE -> goto op_done
        :: else -> skip
        fi;
#ifdef FIX_WAIT
        if
        :: !CLAIMABLE(s) -> unchanged_wait(); goto write_again
        :: else -> skip
        fi;
#endif
#if defined(UPDATE) && !defined(UPD_NOWAIT)
        /* An absent key may be on its way into any candidate another
           write holds (not claimable, as the claim rule judges it). */
        if
        :: opkind == OP_INC && found == NONE && anybusy ->
           unchanged_wait(); goto write_again
        :: else -> skip
        fi;
#endif
        d_step { expect = cc[s]; newc = expect + 1 };
#ifdef NL
        /* A seq_cst compare-and-swap: our earlier stores are visible. */
        (npend[p] == 0);
#endif
#ifdef REWRITE_NOCLAIM
        if
        :: fromcopy -> atomic { newc = expect; ok = 1; take_owner(s) }
        :: else ->
#endif
        atomic {
          if
          :: claim[s] == expect -> claim[s] = newc; ok = 1; take_owner(s)
          :: else -> ok = 0
          fi
        };
#ifdef REWRITE_NOCLAIM
        fi;
#endif
        if
        :: !ok -> goto write_again
        :: else -> skip
        fi;
claimed:
        skip;
        d_step {
          /* The epoch is taken once the slot is ours (protocol_image). */
          clock++; assert(clock < 16);
          stamp = clock * 4 + (opkind == OP_REMOVE || TOMBING -> TOMB_BIT : LIVE_BIT);
          wid = nimg; nimg++; assert(wid < MAXW);
          img_ver[wid] = newc; img_stamp[wid] = stamp;
          img_key[wid] = k; img_val[wid] = nv;
          if
          :: opkind != OP_REMOVE && !TOMBING -> written[k * NV + nv] = 1
          :: else -> skip
          fi;
          if
          :: opkind == OP_INC -> incs++
          :: else -> skip
          fi;
          pslot[p] = s;
          /* Tag, then stamp..value; ver with them unless last.  On the
             node-local path the tag is a relaxed store.  On the RMA path
             it goes in the put, and with FIX_FLUSHVER it is set where
             the flush completes the put (below): no modelled reader
             looks at it before, so when it lands within the put does
             not matter, and leaving that open would only multiply the
             states. */
#if !FLUSHVER
          pend[p * NCP + C_TAG] = 1;
          pval[p * NCP + C_TAG] = (opkind == OP_REMOVE || TOMBING -> 0 : k);
          npend[p]++;
#endif
          c = 0;
          do
          :: c < NC ->
             if
#ifdef NL
#ifdef FIX_VERLAST
             :: c == C_VER -> skip
#endif
#else
#ifdef FIX_FLUSHVER
             :: c == C_VER -> skip
#elif defined(FIX_DIFF)
             :: SAME(s, c) -> skip
#endif
#endif
             :: else ->
                pend[p * NCP + c] = 1;
                pval[p * NCP + c] = (c == C_VER -> newc :
                                     (c == C_STAMP -> stamp :
                                      (c == C_CHECK -> wid :
                                       (c == C_KEY -> k : nv))));
                npend[p]++
             fi;
             c++
          :: else -> break
          od;
          c = 0
        };
#if defined(NL) && defined(FIX_VERLAST)
        /* Release store of ver after every other store of the write. */
        (npend[p] == 0);
        atomic { mem[s * NC + C_VER] = newc; owners[s]--; owned[p]-- };
#endif
#if FLUSHVER
        /* Round trip 3, a flush: every store of the put has landed, and
           landed again if it will.  Then ver by compare-and-swap, pending
           until it lands (once); the writer owns the slot until then. */
        (npend[p] == 0 && nredo[p] == 0);
        d_step {
          tag[s] = (opkind == OP_REMOVE || TOMBING -> 0 : k);
          pend[p * NCP + C_VER] = 1; pval[p * NCP + C_VER] = newc; npend[p]++
        };
#endif
        /* A remove goes on while the copy shows another copy of the key. */
        d_step {
          j = 0; ok = 0;
          do
          :: j < NS -> ok = ok || (opkind == OP_REMOVE && j != s && cc[j] != 0 &&
                                   CV(j, C_KEY) == k && LIVE(j)); j++
          :: else -> break
          od;
          j = 0
        };
        if
        :: ok -> goto write_again
        :: else -> skip
        fi;
#ifdef GUESS
        /* The guess given back, the write goes on from its copy. */
        if
        :: tombing -> tombing = 0; goto from_copy
        :: else -> skip
        fi
#endif
     fi;
op_done:
     skip;
     d_step {
#ifdef REWRITE
       /* A plain write keeps its copy, with its slot as it put it. */
       kept = opkind == OP_WRITE && wid != 0;
       if
       :: kept -> cc[s] = newc; CV(s, C_VER) = newc; CV(s, C_STAMP) = stamp;
          CV(s, C_CHECK) = wid; CV(s, C_KEY) = k; CV(s, C_VAL) = nv
       :: else -> skip
       fi;
#endif
       i++; opkind = 0; k = 0; v = 0; nv = 0; s = 0; found = 0; c = 0;
       expect = 0; newc = 0; stamp = 0; wid = 0; tries = 0; istorn = 0;
       ok = 0; anybusy = 0;
       j = 0;
       do
       :: j < NS && !kept -> cc[j] = 0; CV(j, C_VER) = 0; CV(j, C_STAMP) = 0;
          CV(j, C_CHECK) = 0; CV(j, C_KEY) = 0; CV(j, C_VAL) = 0;
#ifdef NL
          ctag[j] = 0;
#endif
          j++
       :: j >= NS || kept -> break
       od;
       j = 0
     }
  :: else -> break
  od;
  clients_done++
}

/* A write ends when its last store has landed (and landed again, if it
   will); with FIX_FLUSHVER, when its ver lands, sent once the write's
   other stores had all landed. */
#define RELEASE(q, c) \
       if \
       :: FLUSHVER && c == C_VER -> owners[pslot[q]]--; owned[q]-- \
       :: !FLUSHVER && NET_RELEASES && npend[q] == 0 && nredo[q] == 0 && \
          owned[q] -> owners[pslot[q]]--; owned[q] = 0 \
       :: else -> skip \
       fi

/* Stores and put bytes land one chunk at a time, in any order, at any
   moment until their client waits for them.  With RESTORE a put's chunk
   may land once more before the put completes (not the tag, a node-local
   store, nor ver when FIX_FLUSHVER sets it by compare-and-swap). */
#define LAND(q, c) \
  :: atomic { pend[q * NCP + c] -> \
       if \
       :: c == C_TAG -> tag[pslot[q]] = pval[q * NCP + c] \
       :: else -> mem[pslot[q] * NC + c] = pval[q * NCP + c] \
       fi; \
       pend[q * NCP + c] = 0; npend[q]--; \
       if \
       :: RESTORES && c != C_TAG && !(FLUSHVER && c == C_VER) -> \
          redo[q * NCP + c] = 1; nredo[q]++ \
       :: else -> pval[q * NCP + c] = 0 \
       fi; \
       RELEASE(q, c) }

#define RELAND(q, c) \
  :: atomic { redo[q * NCP + c] -> \
       mem[pslot[q] * NC + c] = pval[q * NCP + c]; \
       redo[q * NCP + c] = 0; pval[q * NCP + c] = 0; nredo[q]--; \
       RELEASE(q, c) }

#if RESTORES
#define LAND_ALL(q) LAND(q, 0) LAND(q, 1) LAND(q, 2) LAND(q, 3) LAND(q, 4) \
  LAND(q, 5) RELAND(q, 0) RELAND(q, 1) RELAND(q, 2) RELAND(q, 3) RELAND(q, 4)
#else
#define LAND_ALL(q) LAND(q, 0) LAND(q, 1) LAND(q, 2) LAND(q, 3) LAND(q, 4) \
  LAND(q, 5)
#endif

active proctype net() {
end_net:
  do
  LAND_ALL(0)
  LAND_ALL(1)
  LAND_ALL(2)
  od
}

#define OP(pp, n, kind, key, val) \
  opk[pp * NOPS + n] = kind; opkey[pp * NOPS + n] = key; opval[pp * NOPS + n] = val

init {
  byte j, found, best, k;
  bool ok;
  byte cc[NS];
  byte cm[NS * NC];
  bool istorn;
  d_step {
#ifdef UPDATE
    /* Two increments of key 1, absent at first, with two free slots: no
       increment may be lost.  (No reader: the other scenarios check
       reads.) */
    OP(0, 0, OP_INC, 1, 0);
    OP(1, 0, OP_INC, 1, 0);
#elif defined(FRESH)
    /* The slot was never written: writer 0 inserts key 1, writer 1 key 2
       (evicting it if it comes second), the third client reads key 1. */
    OP(0, 0, OP_WRITE, 1, 1);
    OP(1, 0, OP_WRITE, 2, 2);
    OP(2, 0, OP_READ, 1, 0);
#else
    /* Slot 0 holds key 1 = value 1, finished.  Writer 0 writes the same
       bytes again; writer 1 writes key 2, which evicts key 1; the third
       client reads key 1. */
    img_ver[1] = 1; img_stamp[1] = 1 * 4 + LIVE_BIT; img_key[1] = 1;
    img_val[1] = 1; nimg = 2;
    claim[0] = 1;
    mem[C_VER] = 1; mem[C_STAMP] = img_stamp[1]; mem[C_CHECK] = 1;
    mem[C_KEY] = 1; mem[C_VAL] = 1;
    tag[0] = 1;
    written[1 * NV + 1] = 1;
    OP(0, 0, OP_WRITE, 1, 1);
    OP(1, 0, OP_WRITE, 2, 2);
    OP(2, 0, OP_READ, 1, 0);
#ifdef REWRITE
    /* Writer 0 then writes key 1 again, value 3, from its own copy. */
    OP(0, 1, OP_WRITE, 1, 3);
#endif
#endif
  };
  atomic { run client(0); run client(1); run client(2) };
  (clients_done == NP);
  (npend[0] + npend[1] + npend[2] + nredo[0] + nredo[1] + nredo[2] == 0);
  /* Writers have stopped and every store has landed: no slot may be torn
     or in flight, and every tag names its key (0 for a tombstone). */
  d_step {
    j = 0;
    do
    :: j < NS ->
       cc[j] = claim[j];
       CV(j, C_VER) = mem[j * NC + C_VER];
       CV(j, C_STAMP) = mem[j * NC + C_STAMP];
       CV(j, C_CHECK) = mem[j * NC + C_CHECK];
       CV(j, C_KEY) = mem[j * NC + C_KEY];
       CV(j, C_VAL) = mem[j * NC + C_VAL];
       assert(owners[j] == 0);
       assert(cc[j] == 0 || (!INFL(j) && !TORN(j)));
       assert(cc[j] == 0 || (LIVE(j) && tag[j] == CV(j, C_KEY)) ||
              (TOMB(j) && tag[j] == 0));
       j++
    :: else -> break
    od;
#ifdef UPDATE
    /* No lost increment: key 1 holds the number stored. */
    k = 1;
    found = NONE; best = 0; j = 0;
    do
    :: j < NS ->
       if
       :: cc[j] != 0 && CV(j, C_KEY) == k && LIVE(j) &&
          (found == NONE || EPOCH(j) > best) -> found = j; best = EPOCH(j)
       :: else -> skip
       fi;
       j++
    :: else -> break
    od;
    assert(found != NONE && CV(found, C_VAL) == incs);
#endif
    j = 0
  }
}
