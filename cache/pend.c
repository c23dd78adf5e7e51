/* SPDX-License-Identifier: MIT */
/*
 * Kept map updates, held per map page (pend.h says why and what).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "pend.h"

uint64_t qs_pend_plan(uint32_t cap, uint64_t npages, uint32_t per_page, uint32_t nepochs)
{
	return (uint64_t)cap * sizeof(struct qs_pend_ent) + npages * sizeof(struct qs_pend_page) +
	       ((uint64_t)per_page + 1) * sizeof(uint32_t) + (uint64_t)nepochs * sizeof(uint32_t);
}

static void *pend_alloc(struct qs_pend *pd, uint64_t bytes)
{
	return pd->env->ops->alloc(pd->env->ctx, (size_t)bytes, 64);
}

int qs_pend_init(struct qs_pend *pd, const struct qs_env *env, uint32_t cap,
		 uint64_t npages, uint32_t per_page, uint32_t nepochs)
{
	memset(pd, 0, sizeof(*pd));
	/* Entry numbers, counts and the page offset are 32 and 16 bits. */
	if (!cap || cap == QS_PEND_NONE || !npages || npages >= QS_PEND_NONE || !per_page || per_page > UINT16_MAX + 1u ||
	    !nepochs || nepochs > QS_PEND_EPOCHS_MAX)
		return -EINVAL;
	pd->env = env;
	pd->ent = pend_alloc(pd, (uint64_t)cap * sizeof(*pd->ent));
	pd->pg = pend_alloc(pd, npages * sizeof(*pd->pg));
	pd->bucket = pend_alloc(pd, ((uint64_t)per_page + 1) * sizeof(*pd->bucket));
	pd->epoch_count = pend_alloc(pd, (uint64_t)nepochs * sizeof(*pd->epoch_count));
	if (!pd->ent || !pd->pg || !pd->bucket || !pd->epoch_count) {
		qs_pend_fini(pd);
		return -ENOMEM;
	}
	pd->npages = npages;
	pd->per_page = per_page;
	pd->nepochs = nepochs;
	pd->cap = cap;
	for (uint32_t i = 0; i < cap; i++)
		pd->ent[i].next = i + 1 < cap ? i + 1 : QS_PEND_NONE;
	pd->free_head = 0;
	for (uint64_t g = 0; g < npages; g++)
		pd->pg[g] = (struct qs_pend_page){QS_PEND_NONE, 0, QS_PEND_NONE, QS_PEND_NONE};
	for (uint32_t c = 0; c <= per_page; c++)
		pd->bucket[c] = QS_PEND_NONE;
	pd->held_head = QS_PEND_NONE;
	memset(pd->epoch_count, 0, (size_t)nepochs * sizeof(*pd->epoch_count));
	return 0;
}

void qs_pend_fini(struct qs_pend *pd)
{
	if (pd->env) {
		void *a[] = {pd->ent, pd->pg, pd->bucket, pd->epoch_count};
		for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
			if (a[i])
				pd->env->ops->free(pd->env->ctx, a[i]);
	}
	memset(pd, 0, sizeof(*pd));
}

/* ---- pages by count --------------------------------------------------------- */

/* The list page g is on: its count's bucket, or the held pages. */
static uint32_t *list_of(struct qs_pend *pd, uint64_t g)
{
	uint32_t c = pd->pg[g].count;
	return c & QS_PEND_HELD ? &pd->held_head : &pd->bucket[c];
}

static void bucket_del(struct qs_pend *pd, uint64_t g)
{
	struct qs_pend_page *p = &pd->pg[g];
	if (p->prev != QS_PEND_NONE)
		pd->pg[p->prev].next = p->next;
	else
		*list_of(pd, g) = p->next;
	if (p->next != QS_PEND_NONE)
		pd->pg[p->next].prev = p->prev;
	p->prev = p->next = QS_PEND_NONE;
}

static void bucket_add(struct qs_pend *pd, uint64_t g)
{
	struct qs_pend_page *p = &pd->pg[g];
	uint32_t *head = list_of(pd, g);
	p->prev = QS_PEND_NONE;
	p->next = *head;
	if (p->next != QS_PEND_NONE)
		pd->pg[p->next].prev = (uint32_t)g;
	*head = (uint32_t)g;
	if (!(p->count & QS_PEND_HELD) && p->count > pd->max_count)
		pd->max_count = p->count;
}

/* Page g's count becomes count, its list following (bucket 0 unused): a
 * held page stays on the held list, whatever its count. */
static void count_set(struct qs_pend *pd, uint64_t g, uint32_t count)
{
	struct qs_pend_page *p = &pd->pg[g];
	if (p->count & QS_PEND_HELD) {
		pd->held_count = pd->held_count - (p->count & ~QS_PEND_HELD) + count;
		p->count = count | QS_PEND_HELD;
		return;
	}
	if (p->count)
		bucket_del(pd, g);
	p->count = count;
	if (count)
		bucket_add(pd, g);
}

void qs_pend_page_hold(struct qs_pend *pd, uint64_t page)
{
	struct qs_pend_page *p = &pd->pg[page];
	if (!p->count || (p->count & QS_PEND_HELD))
		return;
	bucket_del(pd, page);
	pd->held_count += p->count;
	p->count |= QS_PEND_HELD;
	bucket_add(pd, page);
}

/* ---- entries ---------------------------------------------------------------- */

bool qs_pend_get(const struct qs_pend *pd, uint64_t lba, struct qs_pend_ent **e)
{
	uint64_t g = lba / pd->per_page;
	uint16_t off = (uint16_t)(lba % pd->per_page);
	for (uint32_t i = pd->pg[g].head; i != QS_PEND_NONE; i = pd->ent[i].next)
		if (pd->ent[i].off == off) {
			*e = &pd->ent[i];
			return true;
		}
	return false;
}

int qs_pend_put(struct qs_pend *pd, uint64_t lba, uint64_t val, uint8_t flags,
		uint8_t epoch)
{
	struct qs_pend_ent *e;
	if (qs_pend_get(pd, lba, &e)) {
		pd->epoch_count[e->epoch]--;
	} else {
		if (pd->free_head == QS_PEND_NONE)
			return -ENOSPC;
		uint64_t g = lba / pd->per_page;
		uint32_t i = pd->free_head;
		e = &pd->ent[i];
		pd->free_head = e->next;
		e->off = (uint16_t)(lba % pd->per_page);
		e->next = pd->pg[g].head;
		pd->pg[g].head = i;
		count_set(pd, g, qs_pend_page_count(pd, g) + 1);
		pd->count++;
	}
	e->val = val;
	e->flags = flags;
	e->epoch = epoch;
	pd->epoch_count[epoch]++;
	return 0;
}

uint32_t qs_pend_fullest(struct qs_pend *pd, uint64_t *page)
{
	if (!pd->count)
		return 0;
	/* max_count only falls here: a take or move leaves it high; every
	 * page with entries may be held (bucket 0 is never used) */
	while (pd->max_count && pd->bucket[pd->max_count] == QS_PEND_NONE)
		pd->max_count--;
	if (!pd->max_count)
		return 0;
	*page = pd->bucket[pd->max_count];
	return pd->max_count;
}

uint32_t qs_pend_page_take(struct qs_pend *pd, uint64_t page, qs_pend_fn fn, void *arg)
{
	struct qs_pend_page *p = &pd->pg[page];
	uint32_t n = 0;
	uint64_t base = page * pd->per_page;
	for (uint32_t i = p->head; i != QS_PEND_NONE;) {
		struct qs_pend_ent *e = &pd->ent[i];
		uint32_t next = e->next;
		if (fn)
			fn(arg, base + e->off, e);
		pd->epoch_count[e->epoch]--;
		e->next = pd->free_head;
		pd->free_head = i;
		i = next;
		n++;
	}
	p->head = QS_PEND_NONE;
	if (p->count & QS_PEND_HELD) {
		bucket_del(pd, page);
		pd->held_count -= n;
		p->count = 0;
	} else {
		count_set(pd, page, 0);
	}
	pd->count -= n;
	return n;
}

/* Page g's entries of epoch from move to epoch to; how many. */
static uint32_t page_epoch_move(struct qs_pend *pd, uint32_t g, uint32_t from, uint32_t to,
				qs_pend_fn fn, void *arg)
{
	uint32_t n = 0;
	for (uint32_t i = pd->pg[g].head; i != QS_PEND_NONE; i = pd->ent[i].next) {
		struct qs_pend_ent *e = &pd->ent[i];
		if (e->epoch != from)
			continue;
		if (fn)
			fn(arg, (uint64_t)g * pd->per_page + e->off, e);
		e->epoch = (uint8_t)to;
		n++;
	}
	pd->epoch_count[from] -= n;
	pd->epoch_count[to] += n;
	return n;
}

uint32_t qs_pend_epoch_move(struct qs_pend *pd, uint32_t from, uint32_t to, qs_pend_fn fn,
			    void *arg)
{
	uint32_t n = 0;
	if (!pd->epoch_count[from] || from == to)
		return 0;
	/* Only pages with entries: the held ones, then every bucket's list,
	 * counts 1 and up. */
	for (uint32_t g = pd->held_head; g != QS_PEND_NONE && pd->epoch_count[from];
	     g = pd->pg[g].next)
		n += page_epoch_move(pd, g, from, to, fn, arg);
	for (uint32_t c = 1; c <= pd->max_count && pd->epoch_count[from]; c++)
		for (uint32_t g = pd->bucket[c]; g != QS_PEND_NONE && pd->epoch_count[from];
		     g = pd->pg[g].next)
			n += page_epoch_move(pd, g, from, to, fn, arg);
	return n;
}
