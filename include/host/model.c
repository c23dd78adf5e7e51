/* SPDX-License-Identifier: MIT */
/*
 * Device models on a timeline. See model.h for the contract and
 * docs/MODEL.md for the structure, the parameters and the calibration.
 *
 * Physical layout of a NAND model: the flash is a set of superblocks, each
 * made of one erase block on every die. A write stream fills a superblock
 * slot by slot and a die programs once it has collected unit_ius IUs; which
 * die a slot is on is the layout (slot_die: die-major or unit-major). Host
 * writes and GC relocations use separate streams (separate open
 * superblocks), as drives do to keep hot and relocated data apart, and with
 * FTL regions every region has its own pair of streams, its own superblocks
 * and its own share of the spare.
 */
#include "host/model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NONE UINT32_MAX

enum sb_state { SB_FREE = 0, SB_OPEN = 1, SB_CLOSED = 2 };

struct stream {
	uint32_t sb;	     /* open superblock, NONE when none */
	uint32_t pos;	     /* next slot in it */
	int host;	     /* host stream: its programs release buffer space */
	uint32_t reg;	     /* FTL region the stream writes for */
	uint64_t *unit_ready; /* per die: when the unit being filled has all data */
};

/*
 * A bandwidth resource (channel, host link direction). A single next-free
 * time would make a transfer that is ready early wait behind one that was
 * reserved earlier for a later time (reads complete out of submission
 * order), so time is cut into slots of BW_SLOT_NS and a transfer takes the
 * free capacity of the slots from its ready time on: work-conserving, and
 * O(slots spanned) per transfer. Slots behind the clock are recycled.
 */
#define BW_SLOT_NS 16000u
#define BW_SLOTS (1u << 15) /* 524 ms ahead */
#define BW_RING (2 * BW_SLOTS) /* ring entries: see bwres.clr */
#define BW_CLEAR 4096u	       /* slots zeroed at a time */

/*
 * One slot of a bandwidth resource, 4 bytes: the rings are the simulator's
 * hottest tables (every transfer walks one). A 16-channel drive's 18 rings
 * take 4.6 MiB (each ring is twice the window, see bwres.clr), where the
 * 16-byte slots with a lap tag they replace took 9 MiB for one window.
 * Only the slots [base, base + BW_SLOTS) are used, and bw_advance zeroes
 * ring entries ahead of that window before it reaches them, so a slot
 * needs no tag to tell whether it belongs to this lap.
 */
struct bwslot {
	uint16_t used; /* ns used in the slot */
	uint16_t hint; /* for a full slot: distance to a later slot that may
			  have room (at most BW_SLOTS: hints stay in the ring) */
};
_Static_assert(sizeof(struct bwslot) == 4, "bandwidth slot is 4 bytes");
_Static_assert(BW_SLOT_NS <= UINT16_MAX && BW_SLOTS <= UINT16_MAX, "slot fields fit");
_Static_assert(BW_SLOTS % BW_CLEAR == 0 && BW_CLEAR <= BW_SLOTS, "zeroing blocks tile the ring");

struct bwres {
	uint64_t base;	/* first slot still kept (absolute slot number) */
	uint64_t tail;	/* end of the last transfer (beyond-horizon fallback) */
	/*
	 * Ring entries of slots below clr are zeroed or in use; from clr on
	 * they still hold slot k - BW_RING, dead by then. clr >= base +
	 * BW_SLOTS always. The ring is twice the window so that the zeroing
	 * can run ahead in BW_CLEAR blocks (a memset) rather than a slot at a
	 * time as the clock moves.
	 */
	uint64_t clr;
	struct bwslot *s; /* ring indexed by slot % BW_RING */
};

/* A program unit of host data in the write buffer, freed when programmed. */
struct buf_ent {
	uint64_t release;
	uint32_t bytes;
};

struct qs_model {
	struct qs_profile p;
	uint64_t user_ius;
	uint32_t ndies, nch, unit, sb_ius, nsb;
	uint64_t phys_ius;
	uint32_t iu;
	/*
	 * Erase time charged per model block: a model superblock holds fewer
	 * units per die than a real erase block, so the erase is charged in
	 * proportion (the real block's erase amortised over its programs).
	 */
	uint64_t erase_ns;
	uint32_t passes; /* program passes per unit (a waiting read waits for one) */
	/* Per-byte transfer costs in ns. */
	double ch_ns_per_byte, lrd_ns_per_byte, lwr_ns_per_byte;

	/* Mapping state (NAND only). */
	uint32_t *map;	    /* user IU -> physical IU, NONE = unmapped */
	uint32_t *rmap;	    /* physical IU -> user IU, NONE = invalid/free */
	/*
	 * map and rmap in one mapping of a memfd instead of malloc'ed arrays
	 * (qs_model_snapshot): the snapshot maps the memfd shared and
	 * read-only, its clones map it private, so that a clone copies only
	 * the pages it writes. maps_fd >= 0 only in a snapshot.
	 */
	unsigned char *maps;
	size_t maps_len, rmap_off;
	int maps_fd;
	uint32_t *sb_valid; /* valid IUs per superblock */
	uint8_t *sb_state;
	uint32_t *free_q; /* FIFO of free superblocks */
	uint32_t free_head, free_n;
	/*
	 * FTL regions: the user LBA range is cut into nreg equal parts, each
	 * with its own host and GC stream and a quota of superblocks (its
	 * share of the flash, spare included). GC of a region picks victims
	 * among that region's superblocks only, so the spare a workload can
	 * use is the spare of the regions it touches: random-write cost does
	 * not depend on the span. nreg = 1 is one global pool.
	 */
	uint32_t nreg;
	uint64_t reg_ius;    /* user IUs per region (the last may be shorter) */
	struct stream *hs;   /* host stream per region */
	struct stream *gs;   /* GC stream per region */
	uint32_t *reg_owned; /* open and closed superblocks per region */
	uint32_t *reg_quota; /* superblocks a region may own before GC */
	uint16_t *sb_reg;    /* owning region of each open/closed superblock */
	/* Closed superblocks of each region, a doubly linked list (GC scans it). */
	uint32_t *reg_head, *sb_next, *sb_prev;
	int unit_major;	     /* slot layout, see slot_die() */
	/*
	 * Paced GC (gc_paced): a region near its quota collects its victim a
	 * little with every host unit programmed, instead of all at once when
	 * it needs a superblock. gc_vic is the victim in progress (off the
	 * list), gc_pos the next slot to look at, gc_budget the IUs to move
	 * per host unit (the victim's valid/invalid ratio at the pick).
	 */
	int gc_paced;
	uint32_t *gc_vic, *gc_pos, *gc_budget;
	int in_gc;

	/* Timelines. */
	uint64_t *ctrl_free;
	uint64_t *die_rd_free;	 /* reads (they suspend programs) */
	uint64_t *die_prog_free; /* programs and erases */
	struct bwres *ch;
	struct bwres link_rd, link_wr;
	/*
	 * Power for die programs (power_w - power_idle_w), a bandwidth
	 * resource: a program takes prog_share_ns of it, t_prog times its
	 * share of the budget, so that at most budget / prog_mw programs run
	 * at once on average (0: no cap).
	 */
	struct bwres power;
	uint64_t prog_share_ns;
	uint64_t clock; /* latest submission time seen */
	uint64_t host_prog_done; /* last host program completion */

	/* Write buffer: bytes accepted and not yet programmed. */
	struct buf_ent *ring;
	uint32_t ring_cap, ring_head, ring_n;
	uint64_t inbuf;

	struct qs_model_counters c;
};

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t xfer_ns(double ns_per_byte, uint64_t bytes)
{
	return (uint64_t)(ns_per_byte * (double)bytes + 0.5);
}

/*
 * Forget slots behind time now: no transfer can start before it. The
 * window moves on with it, and the ring entries it now reaches are zeroed
 * first: they held slots a lap of the ring behind, long dead.
 */
static void bw_advance(struct bwres *r, uint64_t now)
{
	uint64_t s = now / BW_SLOT_NS;
	if (s <= r->base)
		return;
	r->base = s;
	if (s > r->clr) { /* idle for longer than the ring: all of it is dead */
		memset(r->s, 0, BW_RING * sizeof(*r->s));
		r->clr = (s + BW_RING) / BW_CLEAR * BW_CLEAR; /* blocks stay aligned */
		return;
	}
	/* A block at a time: its entries are at most clr + BW_CLEAR - BW_RING
	 * < base - BW_SLOTS + BW_CLEAR < base, dead. */
	while (r->clr < s + BW_SLOTS) {
		memset(&r->s[r->clr % BW_RING], 0, BW_CLEAR * sizeof(*r->s));
		r->clr += BW_CLEAR;
	}
}

/* The used time of absolute slot k, base <= k < base + BW_SLOTS. */
static inline uint16_t *bw_slot(struct bwres *r, uint64_t k)
{
	return &r->s[k % BW_RING].used;
}

/* Is absolute slot k (>= base) full? */
static inline int bw_full(struct bwres *r, uint64_t k)
{
	/* Beyond the ring nothing is reserved (the caller falls back). */
	return k < r->base + BW_SLOTS && r->s[k % BW_RING].used >= BW_SLOT_NS;
}

/*
 * First slot at or after k that is not full. Full slots keep a hint to a
 * later slot (set when they fill, compressed on every walk, as in
 * union-find), so a saturated backlog is crossed in a few steps.
 */
static uint64_t bw_skip(struct bwres *r, uint64_t k)
{
	uint64_t e = k;
	while (bw_full(r, e))
		e += r->s[e % BW_RING].hint;
	while (k < e && bw_full(r, k)) {
		uint64_t nx = k + r->s[k % BW_RING].hint;
		r->s[k % BW_RING].hint = (uint16_t)(e - k);
		k = nx;
	}
	return e;
}

/*
 * Transfer taking dur ns of the resource, ready at t; returns its end. The
 * resource is first brought up to the model's clock (bw_advance): done
 * here, for the one resource used, rather than for all of them on every
 * request.
 */
static uint64_t bw_xfer_at(struct bwres *r, uint64_t now, uint64_t t, uint64_t dur);

static uint64_t bw_xfer(struct qs_model *m, struct bwres *r, uint64_t t, uint64_t dur)
{
	return bw_xfer_at(r, m->clock, t, dur);
}

/*
 * The power resource counts time in units of 2^POWER_SHIFT ns: its
 * reservations lie as far ahead as the dies' queues of programs (GC's
 * included, half a second and more under random writes), beyond the 0.5 s
 * a ring of 16 us slots covers, where bw_xfer would serialise them.
 */
#define POWER_SHIFT 5

/* Start of a program on the power budget, its die ready at ps. */
static uint64_t power_start(struct qs_model *m, uint64_t ps)
{
	uint64_t share = m->prog_share_ns >> POWER_SHIFT;
	uint64_t end = bw_xfer_at(&m->power, m->clock >> POWER_SHIFT, ps >> POWER_SHIFT,
				  share ? share : 1);
	return max64(ps, (end - (share ? share : 1)) << POWER_SHIFT);
}

/* bw_xfer with the clock (now) given, in the resource's own time unit. */
static uint64_t bw_xfer_at(struct bwres *r, uint64_t now, uint64_t t, uint64_t dur)
{
	bw_advance(r, now);
	uint64_t k = t / BW_SLOT_NS;
	if (k < r->base) {
		k = r->base;
		t = k * BW_SLOT_NS;
	}
	uint64_t end = t;
	while (dur) {
		k = bw_skip(r, k);
		if (k + 2 >= r->base + BW_SLOTS) {
			/* Beyond the horizon (deep queues): serialise past the tail. */
			uint64_t s = max64(max64(t, k * BW_SLOT_NS), r->tail);
			end = s + dur;
			break;
		}
		uint16_t *u = bw_slot(r, k);
		uint64_t slot_end = (k + 1) * BW_SLOT_NS;
		uint64_t room = BW_SLOT_NS - *u;
		uint64_t from = t > k * BW_SLOT_NS ? t : k * BW_SLOT_NS;
		if (slot_end - from < room)
			room = slot_end - from;
		if (room) {
			uint64_t c = room < dur ? room : dur;
			*u = (uint16_t)(*u + c);
			dur -= c;
			end = k * BW_SLOT_NS + *u;
			if (end < from + c)
				end = from + c;
		}
		if (*u >= BW_SLOT_NS)
			r->s[k % BW_RING].hint = 1;
		k++;
	}
	if (end > r->tail)
		r->tail = end;
	return end;
}

/* One command on the least busy controller core. */
static uint64_t ctrl_run(struct qs_model *m, uint64_t t)
{
	uint32_t best = 0;
	for (uint32_t i = 1; i < m->p.ctrl_units; i++)
		if (m->ctrl_free[i] < m->ctrl_free[best])
			best = i;
	uint64_t s = max64(t, m->ctrl_free[best]);
	m->ctrl_free[best] = s + m->p.ctrl_ns;
	return s + m->p.ctrl_ns;
}

/*
 * Die of slot q of a superblock. Die-major (default): slot q on die q % D,
 * consecutive IUs on consecutive dies, a die programs once the stream has
 * laid unit_ius IUs on every die (a stream holds up to a stripe of D units
 * in the buffer). Unit-major: a stream fills one die's unit, then the next
 * die's, so an open stream holds at most one partial unit in the buffer:
 * what lets a drive keep many streams open (FTL regions).
 */
static inline uint32_t slot_die(const struct qs_model *m, uint32_t q)
{
	return m->unit_major ? (q / m->unit) % m->ndies : q % m->ndies;
}

/* Is slot q the last of its program unit (the die programs then)? */
static inline int slot_unit_last(const struct qs_model *m, uint32_t q)
{
	return m->unit_major ? q % m->unit == m->unit - 1
			     : (q / m->ndies) % m->unit == m->unit - 1;
}

/* Last slot of the program unit holding slot q. */
static inline uint32_t slot_unit_end(const struct qs_model *m, uint32_t q)
{
	if (m->unit_major)
		return q - q % m->unit + m->unit - 1;
	uint32_t d = q % m->ndies, u = (q / m->ndies) / m->unit;
	return d + m->ndies * (m->unit * u + m->unit - 1);
}

static inline uint32_t die_of_phys(const struct qs_model *m, uint64_t p)
{
	return slot_die(m, (uint32_t)(p % m->sb_ius));
}

/*
 * Read bytes of one IU from die d, starting no earlier than t. Reads take
 * priority over queued programs and erases and push them back by their own
 * duration. Host and GC reads also suspend a program in progress; the
 * read of a read-modify-write does not (the firmware keeps suspends for
 * host reads' latency) and waits for the program pass under way to finish:
 * a unit is programmed in prog_passes passes (QLC: coarse then fine), and
 * the die serves reads between passes. Programs on a die run back to back
 * up to die_prog_free, so the pass under way at time s ends at
 * die_prog_free minus a whole number of t_prog / prog_passes.
 */
static uint64_t die_read(struct qs_model *m, uint32_t d, uint64_t t, uint64_t bytes,
			 int suspend)
{
	uint64_t s = max64(t, m->die_rd_free[d]);
	uint64_t pf = m->die_prog_free[d];
	if (!suspend && pf > s)
		s += (pf - s) % (m->p.t_prog_ns / m->passes);
	uint64_t e = s + m->p.t_read_ns;
	m->die_rd_free[d] = e;
	if (pf > s)
		m->die_prog_free[d] = pf + m->p.t_read_ns;
	m->c.nand_read_bytes += bytes;
	return bw_xfer(m, &m->ch[d % m->nch], e, xfer_ns(m->ch_ns_per_byte, bytes));
}

/*
 * Program one unit on die d once its data is ready; returns completion. A
 * program starts once its die is free and, with a power cap, once its
 * share of the power is: the drive-wide budget decides how many dies
 * program at once, whatever the number of dies.
 */
static uint64_t die_prog(struct qs_model *m, uint32_t d, uint64_t ready)
{
	uint64_t bytes = (uint64_t)m->unit * m->iu;
	uint64_t xe = bw_xfer(m, &m->ch[d % m->nch], ready, xfer_ns(m->ch_ns_per_byte, bytes));
	uint64_t ps = max64(xe, m->die_prog_free[d]);
	if (m->prog_share_ns)
		ps = power_start(m, ps);
	m->die_prog_free[d] = ps + m->p.t_prog_ns;
	m->c.nand_prog_bytes += bytes;
	return m->die_prog_free[d];
}

static void buf_push(struct qs_model *m, uint64_t release, uint32_t bytes)
{
	if (m->ring_n == m->ring_cap) {
		/* Cannot happen with the sizing in qs_model_new; stay safe. */
		m->inbuf -= m->ring[m->ring_head].bytes;
		m->ring_head = (m->ring_head + 1) % m->ring_cap;
		m->ring_n--;
	}
	struct buf_ent *b = &m->ring[(m->ring_head + m->ring_n) % m->ring_cap];
	b->release = release;
	b->bytes = bytes;
	m->ring_n++;
}

/*
 * Admit bytes into the write buffer at time t: wait (in program order) for
 * enough earlier data to be programmed. Returns the admission time.
 */
static uint64_t buf_admit(struct qs_model *m, uint64_t t, uint64_t bytes)
{
	while (m->ring_n && m->ring[m->ring_head].release <= t) {
		m->inbuf -= m->ring[m->ring_head].bytes;
		m->ring_head = (m->ring_head + 1) % m->ring_cap;
		m->ring_n--;
	}
	while (m->ring_n && m->inbuf + bytes > m->p.write_buffer_bytes) {
		t = max64(t, m->ring[m->ring_head].release);
		m->inbuf -= m->ring[m->ring_head].bytes;
		m->ring_head = (m->ring_head + 1) % m->ring_cap;
		m->ring_n--;
	}
	m->inbuf += bytes;
	return t;
}

static uint32_t sb_take_free(struct qs_model *m)
{
	if (!m->free_n) {
		/*
		 * Cannot happen: the model keeps gc_free_low + 3 superblocks
		 * more than the user data needs, so greedy GC always finds a
		 * victim with free space. Stop loudly rather than corrupt state.
		 */
		fprintf(stderr, "qs_model: no free superblock (model state bug)\n");
		abort();
	}
	uint32_t sb = m->free_q[m->free_head];
	m->free_head = (m->free_head + 1) % m->nsb;
	m->free_n--;
	m->sb_state[sb] = SB_OPEN;
	return sb;
}

static int gc_one(struct qs_model *m, uint64_t t, uint32_t r);
static int gc_pick(struct qs_model *m, uint32_t r);
static int gc_step(struct qs_model *m, uint64_t t, uint32_t r, uint32_t budget);

/* Mark an open superblock closed and put it on its region's GC list. */
static void sb_close(struct qs_model *m, uint32_t sb)
{
	uint32_t r = m->sb_reg[sb];
	m->sb_state[sb] = SB_CLOSED;
	m->sb_prev[sb] = NONE;
	m->sb_next[sb] = m->reg_head[r];
	if (m->reg_head[r] != NONE)
		m->sb_prev[m->reg_head[r]] = sb;
	m->reg_head[r] = sb;
}

/* Take a closed superblock off its region's GC list. */
static void sb_unlink(struct qs_model *m, uint32_t sb)
{
	uint32_t r = m->sb_reg[sb];
	if (m->sb_prev[sb] != NONE)
		m->sb_next[m->sb_prev[sb]] = m->sb_next[sb];
	else
		m->reg_head[r] = m->sb_next[sb];
	if (m->sb_next[sb] != NONE)
		m->sb_prev[m->sb_next[sb]] = m->sb_prev[sb];
}

/* The region furthest over its quota (GC target when the free pool is low). */
static uint32_t reg_most_over(const struct qs_model *m)
{
	uint32_t best = 0;
	int64_t over = INT64_MIN;
	for (uint32_t r = 0; r < m->nreg; r++) {
		int64_t o = (int64_t)m->reg_owned[r] - (int64_t)m->reg_quota[r];
		if (o > over) {
			over = o;
			best = r;
		}
	}
	return best;
}

/* Open a new superblock for stream s, collecting garbage first if needed. */
static void stream_open(struct qs_model *m, struct stream *s, uint64_t t)
{
	if (s->sb != NONE)
		sb_close(m, s->sb);
	s->sb = NONE;
	if (!m->in_gc) {
		/*
		 * Greedy GC in the stream's region until it is under its quota,
		 * and anywhere over quota while the free pool is below its
		 * watermark. A victim always frees at least one IU net, because
		 * a region's quota exceeds its user data by the open
		 * superblocks and more.
		 */
		int guard = (int)m->nsb;
		while (guard-- > 0) {
			uint32_t r;
			if (m->reg_owned[s->reg] >= m->reg_quota[s->reg])
				r = s->reg;
			else if (m->free_n < m->p.gc_free_low)
				r = reg_most_over(m);
			else
				break;
			if (!gc_one(m, t, r))
				break;
		}
	}
	s->sb = sb_take_free(m);
	m->sb_reg[s->sb] = (uint16_t)s->reg;
	m->reg_owned[s->reg]++;
	s->pos = 0;
	for (uint32_t d = 0; d < m->ndies; d++)
		s->unit_ready[d] = 0;
}

/*
 * Place one IU in stream s, its data ready at time ready; issue the die's
 * program when its unit is complete. Returns the physical IU.
 */
static uint32_t stream_put(struct qs_model *m, struct stream *s, uint64_t ready)
{
	if (s->sb == NONE || s->pos == m->sb_ius)
		stream_open(m, s, ready);
	uint32_t q = s->pos++;
	uint32_t d = slot_die(m, q);
	s->unit_ready[d] = max64(s->unit_ready[d], ready);
	if (slot_unit_last(m, q)) {
		uint64_t done = die_prog(m, d, s->unit_ready[d]);
		s->unit_ready[d] = 0;
		if (s->host) {
			buf_push(m, done, m->unit * m->iu);
			m->host_prog_done = max64(m->host_prog_done, done);
			m->c.host_prog_bytes += (uint64_t)m->unit * m->iu;
			if (m->gc_paced && !m->in_gc && m->free_n > m->p.gc_free_low &&
			    m->reg_owned[s->reg] >= m->reg_quota[s->reg] &&
			    (m->gc_vic[s->reg] != NONE || gc_pick(m, s->reg)))
				gc_step(m, ready, s->reg, m->gc_budget[s->reg]);
		}
	}
	return s->sb * m->sb_ius + q;
}

/* Is physical IU p still in the host write buffer, its unit not issued? */
static int in_host_buffer(const struct qs_model *m, uint32_t p)
{
	uint32_t sb = p / m->sb_ius;
	const struct stream *h = &m->hs[m->sb_reg[sb]];
	if (sb != h->sb)
		return 0;
	uint32_t q = p % m->sb_ius;
	return h->pos <= slot_unit_end(m, q);
}

static void invalidate(struct qs_model *m, uint32_t p)
{
	m->rmap[p] = NONE;
	m->sb_valid[p / m->sb_ius]--;
}

static void place(struct qs_model *m, uint32_t lba, uint32_t p)
{
	m->map[lba] = p;
	m->rmap[p] = lba;
	m->sb_valid[p / m->sb_ius]++;
}

/*
 * Choose region r's victim: its closed superblock with the fewest valid
 * IUs (greedy), taken off the list. 0 if none would free space.
 */
static int gc_pick(struct qs_model *m, uint32_t r)
{
	uint32_t victim = NONE, best = UINT32_MAX;
	for (uint32_t i = m->reg_head[r]; i != NONE; i = m->sb_next[i])
		if (m->sb_valid[i] < best || (m->sb_valid[i] == best && i < victim)) {
			best = m->sb_valid[i];
			victim = i;
		}
	if (victim == NONE || best == m->sb_ius)
		return 0;
	sb_unlink(m, victim);
	m->gc_vic[r] = victim;
	m->gc_pos[r] = 0;
	/* IUs to move per host unit so the victim is done when its free space is used. */
	uint64_t inval = m->sb_ius - best;
	m->gc_budget[r] = (uint32_t)(((uint64_t)best * m->unit + inval - 1) / inval);
	m->c.gc_runs++;
	return 1;
}

/*
 * Move up to budget valid IUs of region r's victim through the region's
 * GC stream (read with read priority, laid on the timelines from t); once
 * the victim holds nothing valid, erase its block on every die and free
 * it. Returns 1 when the victim was freed.
 */
static int gc_step(struct qs_model *m, uint64_t t, uint32_t r, uint32_t budget)
{
	uint32_t victim = m->gc_vic[r], base = victim * m->sb_ius;
	m->in_gc = 1;
	while (m->gc_pos[r] < m->sb_ius && m->sb_valid[victim] && budget) {
		uint32_t q = m->gc_pos[r]++;
		uint32_t lba = m->rmap[base + q];
		if (lba == NONE)
			continue;
		uint64_t rd = die_read(m, die_of_phys(m, base + q), t, m->iu, 1);
		invalidate(m, base + q);
		place(m, lba, stream_put(m, &m->gs[r], rd));
		m->c.gc_moves++;
		budget--;
	}
	m->in_gc = 0;
	if (m->sb_valid[victim])
		return 0;
	for (uint32_t d = 0; d < m->ndies; d++) {
		uint64_t s = max64(max64(t, m->die_prog_free[d]), m->die_rd_free[d]);
		m->die_prog_free[d] = s + m->erase_ns;
		m->c.erases++;
	}
	m->sb_state[victim] = SB_FREE;
	m->reg_owned[r]--;
	m->free_q[(m->free_head + m->free_n) % m->nsb] = victim;
	m->free_n++;
	m->gc_vic[r] = NONE;
	return 1;
}

/*
 * Collect one victim of region r at once: the one in progress if any, else
 * a greedy pick. The work is laid on the die timelines from time t, where
 * it competes with host I/O. Returns 1 if a superblock was collected, 0
 * if the region has none that would free space.
 */
static int gc_one(struct qs_model *m, uint64_t t, uint32_t r)
{
	if (m->gc_vic[r] == NONE && !gc_pick(m, r))
		return 0;
	gc_step(m, t, r, UINT32_MAX);
	return 1;
}

static uint64_t nand_read(struct qs_model *m, uint64_t t, uint64_t off, uint64_t len)
{
	uint64_t done = t;
	uint64_t end = off + len;
	while (off < end) {
		uint64_t lba = off / m->iu;
		uint64_t piece = (lba + 1) * m->iu - off;
		if (piece > end - off)
			piece = end - off;
		uint32_t p = m->map[lba];
		if (p != NONE && !in_host_buffer(m, p))
			done = max64(done, die_read(m, die_of_phys(m, p), t, piece, 1));
		off += piece;
	}
	return done;
}

static uint64_t nand_write(struct qs_model *m, uint64_t t, uint64_t off, uint64_t len)
{
	uint64_t iu0 = off / m->iu, iu1 = (off + len - 1) / m->iu;
	uint64_t need = 0;
	for (uint64_t l = iu0; l <= iu1; l++)
		if (m->map[l] == NONE || !in_host_buffer(m, m->map[l]))
			need++;
	uint64_t acc = buf_admit(m, t, need * m->iu);
	uint64_t ack = acc;
	for (uint64_t l = iu0; l <= iu1; l++) {
		uint64_t s = l * m->iu, e = s + m->iu;
		int partial = off > s || off + len < e;
		uint32_t old = m->map[l];
		if (old != NONE && in_host_buffer(m, old)) {
			/* Overwrite or merge inside the buffer: no NAND work. */
			m->c.buffer_merges++;
			continue;
		}
		uint64_t ready = acc;
		if (partial) {
			m->c.partial_ius++;
			if (old != NONE) {
				/*
				 * Read-modify-write: the old IU must be read to merge.
				 * The buffer holds whole IUs only (what PLP must save
				 * is a whole IU), so the write completes once merged.
				 */
				ready = die_read(m, die_of_phys(m, old), acc, m->iu, 0);
				ack = max64(ack, ready);
				m->c.rmw++;
			}
		}
		if (old != NONE)
			invalidate(m, old);
		place(m, (uint32_t)l, stream_put(m, &m->hs[l / m->reg_ius], ready));
	}
	return ack;
}

static uint64_t nand_discard(struct qs_model *m, uint64_t off, uint64_t len)
{
	/* Only whole IUs can be unmapped; a partial IU keeps its mapping. */
	uint64_t iu0 = (off + m->iu - 1) / m->iu, iu1 = (off + len) / m->iu;
	for (uint64_t l = iu0; l < iu1; l++) {
		if (m->map[l] == NONE)
			continue;
		invalidate(m, m->map[l]);
		m->map[l] = NONE;
	}
	return 0;
}

static uint64_t scm_io(struct qs_model *m, uint64_t t, uint64_t off, uint64_t len, int write)
{
	uint64_t done = t;
	for (uint64_t l = off / m->iu; l * m->iu < off + len; l++) {
		uint32_t d = (uint32_t)(l % m->ndies);
		uint64_t *tl = write ? m->die_prog_free : m->die_rd_free;
		uint64_t s = max64(t, tl[d]);
		tl[d] = s + (write ? m->p.t_prog_ns : m->p.t_read_ns);
		done = max64(done, tl[d]);
	}
	if (write)
		m->c.nand_prog_bytes += len;
	else
		m->c.nand_read_bytes += len;
	return done;
}

uint64_t qs_model_submit(struct qs_model *m, uint64_t now, int op, uint64_t off, uint64_t len)
{
	uint64_t cap = m->user_ius * m->iu;
	if (op != QS_OP_FLUSH && (off >= cap || len == 0 || len > cap - off))
		return ctrl_run(m, now); /* rejected: the controller still saw it */
	if (now > m->clock)
		m->clock = now; /* the bandwidth resources follow in bw_xfer */
	uint64_t t = ctrl_run(m, now);
	switch (op) {
	case QS_OP_READ: {
		m->c.host_reads++;
		m->c.host_read_bytes += len;
		uint64_t done = m->p.media == QS_MEDIA_SCM ? scm_io(m, t, off, len, 0)
							  : nand_read(m, t, off, len);
		return bw_xfer(m, &m->link_rd, done, xfer_ns(m->lrd_ns_per_byte, len));
	}
	case QS_OP_WRITE: {
		m->c.host_writes++;
		m->c.host_write_bytes += len;
		uint64_t in = bw_xfer(m, &m->link_wr, t, xfer_ns(m->lwr_ns_per_byte, len));
		if (m->p.media == QS_MEDIA_SCM)
			return scm_io(m, in, off, len, 1);
		return nand_write(m, in, off, len);
	}
	case QS_OP_FLUSH:
		m->c.host_flushes++;
		/* With PLP the buffer is already durable. */
		return m->p.plp ? t : max64(t, m->host_prog_done);
	case QS_OP_DISCARD:
		m->c.host_discards++;
		m->c.host_discard_bytes += len;
		if (m->p.media == QS_MEDIA_NAND)
			nand_discard(m, off, len);
		return t;
	}
	return t;
}

uint64_t qs_model_idle_time(const struct qs_model *m)
{
	uint64_t t = max64(m->link_rd.tail, m->link_wr.tail);
	for (uint32_t i = 0; i < m->p.ctrl_units; i++)
		t = max64(t, m->ctrl_free[i]);
	for (uint32_t d = 0; d < m->ndies; d++)
		t = max64(t, max64(m->die_rd_free[d], m->die_prog_free[d]));
	for (uint32_t c = 0; c < m->nch; c++)
		t = max64(t, m->ch[c].tail);
	return max64(t, m->power.tail << POWER_SHIFT);
}

uint64_t qs_model_fill_seq(struct qs_model *m, uint64_t now, uint64_t off, uint64_t len)
{
	uint64_t chunk = 16ull * m->iu;
	off -= off % m->iu;
	for (uint64_t o = off; o < off + len; o += chunk) {
		uint64_t l = chunk < off + len - o ? chunk : off + len - o;
		l += (m->iu - l % m->iu) % m->iu;
		if (o + l > m->user_ius * m->iu)
			l = m->user_ius * m->iu - o;
		now = qs_model_submit(m, now, QS_OP_WRITE, o, l);
	}
	return qs_model_idle_time(m);
}

static int bw_init(struct bwres *r)
{
	r->s = calloc(BW_RING, sizeof(*r->s));
	r->clr = BW_RING;
	return r->s ? 0 : -ENOMEM;
}

static void bw_fini(struct bwres *r)
{
	free(r->s);
}

static void bw_copy(struct bwres *d, const struct bwres *s)
{
	memcpy(d->s, s->s, BW_RING * sizeof(*s->s));
	d->base = s->base;
	d->clr = s->clr;
	d->tail = s->tail;
}

uint64_t qs_model_fill_random(struct qs_model *m, uint64_t now, uint64_t off, uint64_t len,
			      uint64_t seed)
{
	uint64_t iu0 = off / m->iu, n = len / m->iu;
	if (iu0 >= m->user_ius)
		return qs_model_idle_time(m);
	if (n > m->user_ius - iu0)
		n = m->user_ius - iu0;
	uint32_t *perm = malloc(n * sizeof(*perm));
	if (!perm) {
		/* No memory for the order: fall back to a sequential fill. */
		return qs_model_fill_seq(m, now, off, len);
	}
	for (uint64_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (uint64_t i = n; i > 1; i--) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t j = (seed >> 33) % i;
		uint32_t x = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = x;
	}
	for (uint64_t i = 0; i < n; i++)
		now = qs_model_submit(m, now, QS_OP_WRITE, (iu0 + perm[i]) * m->iu, m->iu);
	free(perm);
	return qs_model_idle_time(m);
}

/* User IUs of region r (the last region may be shorter). */
static uint64_t reg_user_ius(const struct qs_model *m, uint32_t r)
{
	uint64_t s = (uint64_t)r * m->reg_ius;
	return m->user_ius - s < m->reg_ius ? m->user_ius - s : m->reg_ius;
}

/* Superblocks region r needs to make progress: its data, two open, one spare. */
static uint64_t reg_need(const struct qs_model *m, uint32_t r)
{
	return (reg_user_ius(m, r) + m->sb_ius - 1) / m->sb_ius + 3;
}

/* How model_create sets up map and rmap. */
enum maps_init {
	MAPS_INIT, /* allocated, every IU unmapped */
	MAPS_RAW,  /* allocated, left for the caller to fill */
	MAPS_NONE, /* not allocated: the caller maps them */
};

static int alloc_all(struct qs_model *m, enum maps_init mi)
{
	m->ctrl_free = calloc(m->p.ctrl_units, sizeof(uint64_t));
	m->die_rd_free = calloc(m->ndies, sizeof(uint64_t));
	m->die_prog_free = calloc(m->ndies, sizeof(uint64_t));
	m->ch = calloc(m->nch, sizeof(*m->ch));
	if (!m->ctrl_free || !m->die_rd_free || !m->die_prog_free || !m->ch)
		return -ENOMEM;
	for (uint32_t c = 0; c < m->nch; c++)
		if (bw_init(&m->ch[c]))
			return -ENOMEM;
	if (bw_init(&m->link_rd) || bw_init(&m->link_wr) || bw_init(&m->power))
		return -ENOMEM;
	if (m->p.media == QS_MEDIA_SCM)
		return 0;
	if (mi != MAPS_NONE) {
		m->map = malloc(m->user_ius * sizeof(uint32_t));
		m->rmap = malloc(m->phys_ius * sizeof(uint32_t));
		if (!m->map || !m->rmap)
			return -ENOMEM;
	}
	m->sb_valid = calloc(m->nsb, sizeof(uint32_t));
	m->sb_state = calloc(m->nsb, 1);
	m->free_q = calloc(m->nsb, sizeof(uint32_t));
	m->ring = calloc(m->ring_cap, sizeof(*m->ring));
	m->hs = calloc(m->nreg, sizeof(*m->hs));
	m->gs = calloc(m->nreg, sizeof(*m->gs));
	m->reg_owned = calloc(m->nreg, sizeof(uint32_t));
	m->reg_quota = calloc(m->nreg, sizeof(uint32_t));
	m->sb_reg = calloc(m->nsb, sizeof(uint16_t));
	m->reg_head = malloc(m->nreg * sizeof(uint32_t));
	m->sb_next = malloc(m->nsb * sizeof(uint32_t));
	m->sb_prev = malloc(m->nsb * sizeof(uint32_t));
	if (!m->sb_valid || !m->sb_state || !m->free_q || !m->ring ||
	    !m->hs || !m->gs || !m->reg_owned || !m->reg_quota || !m->sb_reg || !m->reg_head ||
	    !m->sb_next || !m->sb_prev)
		return -ENOMEM;
	memset(m->reg_head, 0xff, m->nreg * sizeof(uint32_t));
	m->gc_vic = malloc(m->nreg * sizeof(uint32_t));
	m->gc_pos = calloc(m->nreg, sizeof(uint32_t));
	m->gc_budget = calloc(m->nreg, sizeof(uint32_t));
	if (!m->gc_vic || !m->gc_pos || !m->gc_budget)
		return -ENOMEM;
	memset(m->gc_vic, 0xff, m->nreg * sizeof(uint32_t));
	for (uint32_t r = 0; r < m->nreg; r++) {
		m->hs[r].unit_ready = calloc(m->ndies, sizeof(uint64_t));
		m->gs[r].unit_ready = calloc(m->ndies, sizeof(uint64_t));
		if (!m->hs[r].unit_ready || !m->gs[r].unit_ready)
			return -ENOMEM;
	}
	return 0;
}

/* Refuse: errno EINVAL and, when err is not NULL, the message. */
__attribute__((format(printf, 3, 4)))
static struct qs_model *model_refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	errno = EINVAL;
	return NULL;
}

static struct qs_model *model_create(const struct qs_profile *p, uint64_t scaled,
				     enum maps_init mi, char *err, size_t errlen)
{
	if (!p)
		return model_refuse(err, errlen, "no profile");
	if (!p->iu_bytes || !qs_profile_dies(p) || !p->unit_ius || !p->ctrl_units)
		return model_refuse(err, errlen, "profile %s: keys 'iu_kib' (%u KiB), 'channels' "
				    "(%u), 'dies_per_channel' (%u), 'unit_ius' (%u) and "
				    "'ctrl_units' (%u) must each be at least 1", p->name,
				    p->iu_bytes / 1024, p->channels, p->dies_per_channel,
				    p->unit_ius, p->ctrl_units);
	struct qs_model *m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->p = *p;
	m->maps_fd = -1;
	m->iu = p->iu_bytes;
	m->ndies = qs_profile_dies(p);
	m->nch = p->channels;
	m->unit = p->unit_ius;
	m->passes = p->prog_passes ? p->prog_passes : 1;
	m->unit_major = p->unit_major != 0;
	m->gc_paced = p->gc_paced != 0;
	m->user_ius = (scaled ? scaled : p->capacity_bytes) / m->iu;
	m->ch_ns_per_byte = 1000.0 / p->channel_mbps;
	m->lrd_ns_per_byte = 1000.0 / p->link_read_mbps;
	m->lwr_ns_per_byte = 1000.0 / p->link_write_mbps;
	if (p->prog_mw > 0 && p->power_w > p->power_idle_w)
		m->prog_share_ns = (uint64_t)((double)p->t_prog_ns * p->prog_mw /
					      ((p->power_w - p->power_idle_w) * 1000.0) + 0.5);
	if (m->user_ius == 0 || m->user_ius >= NONE / 2) {
		uint64_t ius = m->user_ius, bytes = scaled ? scaled : p->capacity_bytes;
		free(m);
		if (!ius)
			return model_refuse(err, errlen, "profile %s: a model of %llu bytes holds "
					    "no IU of 'iu_kib' = %u KiB; allowed: at least one IU",
					    p->name, (unsigned long long)bytes, p->iu_bytes / 1024);
		return model_refuse(err, errlen, "profile %s: a model of %llu bytes is %llu IUs "
				    "of 'iu_kib' = %u KiB; allowed: below 2^31 IUs (the size "
				    "follows 'capacity_gb' (%.0f), or 'superblocks' (%u) die "
				    "stripes of 'channels' x 'dies_per_channel' x 'unit_ius' "
				    "(%u x %u x %u) IUs: lower them or raise 'iu_kib')", p->name,
				    (unsigned long long)bytes, (unsigned long long)ius,
				    p->iu_bytes / 1024, (double)p->capacity_bytes / 1e9,
				    p->superblocks, p->channels, p->dies_per_channel, p->unit_ius);
	}
	if (p->media == QS_MEDIA_NAND) {
		/*
		 * Superblock size: a whole number of die stripes, chosen so that
		 * the model has about p->superblocks of them at any scale (the
		 * GC statistics depend on the count, not on the size).
		 */
		uint64_t row = (uint64_t)m->ndies * m->unit;
		double phys = (double)m->user_ius * (1.0 + p->op_pct / 100.0);
		uint64_t k = (uint64_t)(phys / ((double)row * p->superblocks) + 0.5);
		if (k == 0)
			k = 1;
		m->sb_ius = (uint32_t)(row * k);
		uint64_t nsb = (uint64_t)(phys / (double)m->sb_ius + 0.5);
		m->nreg = p->ftl_regions ? p->ftl_regions : 1;
		if (m->nreg > m->user_ius)
			m->nreg = (uint32_t)m->user_ius;
		m->reg_ius = (m->user_ius + m->nreg - 1) / m->nreg;
		m->nreg = (uint32_t)((m->user_ius + m->reg_ius - 1) / m->reg_ius);
		/*
		 * Every region needs its user data plus an open host and GC
		 * superblock plus one to make progress; the free-pool watermark
		 * comes on top.
		 */
		uint64_t min_sb = p->gc_free_low;
		for (uint32_t r = 0; r < m->nreg; r++)
			min_sb += reg_need(m, r);
		if (m->nreg > 1)
			min_sb += m->nreg; /* rounding of proportional quotas */
		if (nsb < min_sb)
			nsb = min_sb;
		m->phys_ius = nsb * m->sb_ius;
		if (m->phys_ius >= NONE) {
			uint64_t phys_ius = m->phys_ius;
			uint32_t sb_ius = m->sb_ius, nreg = m->nreg;
			free(m);
			return model_refuse(err, errlen, "profile %s: %llu superblocks of %u IUs "
					    "make %llu physical IUs; allowed: below 2^32 (from "
					    "'op_pct' %g, 'superblocks' %u, 'gc_free_low' %u and "
					    "'ftl_regions' %u, each region keeping 3 superblocks: "
					    "lower them or raise 'iu_kib')", p->name,
					    (unsigned long long)nsb, sb_ius,
					    (unsigned long long)phys_ius, p->op_pct, p->superblocks,
					    p->gc_free_low, nreg);
		}
		m->nsb = (uint32_t)nsb;
		uint64_t units = k * 1; /* program units per die in one superblock */
		m->erase_ns = units >= p->block_units
				      ? p->t_erase_ns
				      : p->t_erase_ns * units / p->block_units;
		m->ring_cap = (uint32_t)(p->write_buffer_bytes / ((uint64_t)m->unit * m->iu)) +
			      2 * m->ndies + 16;
	}
	if (alloc_all(m, mi)) {
		qs_model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	if (p->media == QS_MEDIA_NAND) {
		if (mi == MAPS_INIT) {
			memset(m->map, 0xff, m->user_ius * sizeof(uint32_t));
			memset(m->rmap, 0xff, m->phys_ius * sizeof(uint32_t));
		}
		for (uint32_t i = 0; i < m->nsb; i++)
			m->free_q[i] = i;
		m->free_n = m->nsb;
		/*
		 * Quotas: each region's share of the superblocks above the
		 * watermark, in proportion to its user IUs (never below what it
		 * needs). With one region, GC runs exactly when the free pool
		 * drops below gc_free_low.
		 */
		uint64_t avail = m->nsb - m->p.gc_free_low + 1;
		for (uint32_t r = 0; r < m->nreg; r++) {
			uint64_t q = avail * reg_user_ius(m, r) / m->user_ius;
			if (q < reg_need(m, r))
				q = reg_need(m, r);
			m->reg_quota[r] = (uint32_t)q;
			m->hs[r].sb = m->gs[r].sb = NONE;
			m->hs[r].host = 1;
			m->hs[r].reg = m->gs[r].reg = r;
		}
	}
	return m;
}

uint64_t qs_model_default_bytes(const struct qs_profile *p)
{
	uint64_t v = (uint64_t)p->iu_bytes << 20;
	if (p->media == QS_MEDIA_NAND) {
		double stripe = (double)qs_profile_dies(p) * p->unit_ius * p->iu_bytes;
		double need = stripe * p->superblocks / (1.0 + p->op_pct / 100.0);
		if (need > (double)v)
			v = (uint64_t)need;
	}
	if (v > p->capacity_bytes)
		v = p->capacity_bytes;
	return v - v % p->iu_bytes;
}

struct qs_model *qs_model_new(const struct qs_profile *p, uint64_t scaled)
{
	return model_create(p, scaled, MAPS_INIT, NULL, 0);
}

int qs_model_create(struct qs_model **out, const struct qs_profile *p, uint64_t scaled,
		    char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	*out = model_create(p, scaled, MAPS_INIT, err, errlen);
	if (*out)
		return 0;
	if (errno == ENOMEM && err && errlen)
		snprintf(err, errlen, "profile %s: no memory for a model of %llu bytes", p->name,
			 (unsigned long long)(scaled ? scaled : p->capacity_bytes));
	return -errno;
}

void qs_model_free(struct qs_model *m)
{
	if (!m)
		return;
	free(m->ctrl_free);
	free(m->die_rd_free);
	free(m->die_prog_free);
	for (uint32_t c = 0; m->ch && c < m->nch; c++)
		bw_fini(&m->ch[c]);
	free(m->ch);
	bw_fini(&m->link_rd);
	bw_fini(&m->link_wr);
	bw_fini(&m->power);
	if (m->maps) {
		munmap(m->maps, m->maps_len);
	} else {
		free(m->map);
		free(m->rmap);
	}
	if (m->maps_fd >= 0)
		close(m->maps_fd);
	free(m->sb_valid);
	free(m->sb_state);
	free(m->free_q);
	for (uint32_t r = 0; r < m->nreg; r++) {
		if (m->hs)
			free(m->hs[r].unit_ready);
		if (m->gs)
			free(m->gs[r].unit_ready);
	}
	free(m->hs);
	free(m->gs);
	free(m->reg_owned);
	free(m->reg_quota);
	free(m->sb_reg);
	free(m->reg_head);
	free(m->gc_vic);
	free(m->gc_pos);
	free(m->gc_budget);
	free(m->sb_next);
	free(m->sb_prev);
	free(m->ring);
	free(m);
}

#define DUP(field, n)                                                                  \
	do {                                                                           \
		if (m->field) {                                                        \
			memcpy(c->field, m->field, (size_t)(n) * sizeof(*m->field));   \
		}                                                                      \
	} while (0)

/* A copy of m but for map and rmap, which mi says how to set up. */
static struct qs_model *clone_rest(const struct qs_model *m, enum maps_init mi)
{
	struct qs_model *c = model_create(&m->p, m->user_ius * m->iu, mi, NULL, 0);
	if (!c)
		return NULL;
	DUP(ctrl_free, m->p.ctrl_units);
	DUP(die_rd_free, m->ndies);
	DUP(die_prog_free, m->ndies);
	for (uint32_t i = 0; i < m->nch; i++)
		bw_copy(&c->ch[i], &m->ch[i]);
	bw_copy(&c->link_rd, &m->link_rd);
	bw_copy(&c->link_wr, &m->link_wr);
	bw_copy(&c->power, &m->power);
	c->clock = m->clock;
	if (m->p.media == QS_MEDIA_NAND) {
		DUP(sb_valid, m->nsb);
		DUP(sb_state, m->nsb);
		DUP(free_q, m->nsb);
		DUP(ring, m->ring_cap);
		DUP(reg_owned, m->nreg);
		DUP(sb_reg, m->nsb);
		DUP(reg_head, m->nreg);
		DUP(gc_vic, m->nreg);
		DUP(gc_pos, m->nreg);
		DUP(gc_budget, m->nreg);
		DUP(sb_next, m->nsb);
		DUP(sb_prev, m->nsb);
		for (uint32_t r = 0; r < m->nreg; r++) {
			DUP(hs[r].unit_ready, m->ndies);
			DUP(gs[r].unit_ready, m->ndies);
			c->hs[r].sb = m->hs[r].sb;
			c->hs[r].pos = m->hs[r].pos;
			c->gs[r].sb = m->gs[r].sb;
			c->gs[r].pos = m->gs[r].pos;
		}
	}
	c->free_head = m->free_head;
	c->free_n = m->free_n;
	c->host_prog_done = m->host_prog_done;
	c->ring_head = m->ring_head;
	c->ring_n = m->ring_n;
	c->inbuf = m->inbuf;
	c->c = m->c;
	return c;
}

struct qs_model *qs_model_clone(const struct qs_model *m)
{
	if (m->maps_fd < 0) {
		struct qs_model *c = clone_rest(m, MAPS_RAW);
		if (c && m->p.media == QS_MEDIA_NAND) {
			memcpy(c->map, m->map, m->user_ius * sizeof(uint32_t));
			memcpy(c->rmap, m->rmap, m->phys_ius * sizeof(uint32_t));
		}
		return c;
	}
	struct qs_model *c = clone_rest(m, MAPS_NONE);
	if (!c)
		return NULL;
	void *p = mmap(NULL, m->maps_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, m->maps_fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;
		qs_model_free(c);
		errno = err;
		return NULL;
	}
	c->maps = p;
	c->maps_len = m->maps_len;
	c->rmap_off = m->rmap_off;
	c->map = (uint32_t *)(void *)c->maps;
	c->rmap = (uint32_t *)(void *)(c->maps + c->rmap_off);
	return c;
}

struct qs_model *qs_model_snapshot(const struct qs_model *m)
{
	if (m->p.media != QS_MEDIA_NAND)
		return qs_model_clone(m);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t map_len = m->user_ius * sizeof(uint32_t), rmap_len = m->phys_ius * sizeof(uint32_t);
	size_t rmap_off = (map_len + pg - 1) / pg * pg;
	size_t len = rmap_off + (rmap_len + pg - 1) / pg * pg;
	struct qs_model *c = clone_rest(m, MAPS_NONE);
	if (!c)
		return NULL;
	int err = 0;
	c->maps_fd = memfd_create("qs_model_snapshot", MFD_CLOEXEC);
	if (c->maps_fd < 0 || ftruncate(c->maps_fd, (off_t)len)) {
		err = errno;
	} else {
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->maps_fd, 0);
		if (p == MAP_FAILED) {
			err = errno;
		} else {
			c->maps = p;
			c->maps_len = len;
			c->rmap_off = rmap_off;
			c->map = (uint32_t *)(void *)c->maps;
			c->rmap = (uint32_t *)(void *)(c->maps + rmap_off);
			memcpy(c->map, m->map, map_len);
			memcpy(c->rmap, m->rmap, rmap_len);
			/* A write to the snapshot would show through in its
			 * clones: make it fault instead. */
			if (mprotect(p, len, PROT_READ))
				err = errno;
		}
	}
	if (err) {
		qs_model_free(c);
		errno = err;
		return NULL;
	}
	return c;
}

uint64_t qs_model_capacity(const struct qs_model *m)
{
	return m->user_ius * m->iu;
}

uint32_t qs_model_iu_bytes(const struct qs_model *m)
{
	return m->iu;
}

const struct qs_profile *qs_model_profile(const struct qs_model *m)
{
	return &m->p;
}

void qs_model_get_counters(const struct qs_model *m, struct qs_model_counters *c)
{
	*c = m->c;
}

uint32_t qs_model_free_superblocks(const struct qs_model *m)
{
	return m->free_n;
}

uint32_t qs_model_superblocks(const struct qs_model *m)
{
	return m->nsb;
}

uint64_t qs_model_superblock_bytes(const struct qs_model *m)
{
	return m->nsb ? (uint64_t)m->sb_ius * m->iu : 0;
}

int qs_model_check(const struct qs_model *m)
{
	if (m->p.media != QS_MEDIA_NAND)
		return 0;
	uint32_t *cnt = calloc(m->nsb, sizeof(uint32_t));
	if (!cnt)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t l = 0; l < m->user_ius && !rc; l++) {
		uint32_t p = m->map[l];
		if (p == NONE)
			continue;
		if (p >= m->phys_ius || m->rmap[p] != l || m->sb_state[p / m->sb_ius] == SB_FREE)
			rc = -EIO;
		else
			cnt[p / m->sb_ius]++;
	}
	for (uint64_t p = 0; p < m->phys_ius && !rc; p++)
		if (m->rmap[p] != NONE && (m->rmap[p] >= m->user_ius || m->map[m->rmap[p]] != p))
			rc = -EIO;
	uint32_t nfree = 0;
	for (uint32_t i = 0; i < m->nsb && !rc; i++) {
		if (cnt[i] != m->sb_valid[i])
			rc = -EIO;
		nfree += m->sb_state[i] == SB_FREE;
	}
	if (!rc && nfree != m->free_n)
		rc = -EIO;
	/* Ownership: every used superblock counted in its region, data in place. */
	memset(cnt, 0, m->nsb * sizeof(uint32_t));
	for (uint32_t i = 0; i < m->nsb && !rc; i++) {
		if (m->sb_state[i] == SB_FREE)
			continue;
		if (m->sb_reg[i] >= m->nreg)
			rc = -EIO;
		else
			cnt[m->sb_reg[i]]++;
	}
	for (uint32_t r = 0; r < m->nreg && !rc; r++)
		if (cnt[r] != m->reg_owned[r])
			rc = -EIO;
	for (uint64_t p = 0; p < m->phys_ius && !rc; p++)
		if (m->rmap[p] != NONE && m->rmap[p] / m->reg_ius != m->sb_reg[p / m->sb_ius])
			rc = -EIO;
	free(cnt);
	return rc;
}
