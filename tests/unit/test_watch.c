/*
 * Unit tests of the watch hub (daemon/core/watch.c) through watch.h, on a
 * real loop and memory store whose events go through events.c as in the
 * daemon, with fake connections (watch_peer): each notes the lines the
 * hub sends it, rendered "W put KEY@REV", "W del KEY@REV",
 * "W cancelled REASON NEXT_REV" (COMPACT_REV for compacted) or "W progress
 * REV", and says it is full
 * when told to.  The index (watch_index.h) is tested on its own too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "md_fx.h"
#include "core/req.h"
#include "core/watch.h"
#include "core/watch_index.h"
#include "util.h"

struct peer {
	struct watch_peer	 wp;
	struct buf		 raw;	/* what the hub sent */
	struct buf		 out;	/* rendered, one line each */
	int			 full;
};

static void
peer_send(void *arg, const void *p, size_t len)
{
	struct peer	*pe = arg;

	buf_add(&pe->raw, p, len);
}

static int
peer_full(void *arg)
{
	return (((struct peer *)arg)->full);
}

static void
peer_init(struct peer *pe, struct metad *md)
{
	memset(pe, 0, sizeof *pe);
	TAILQ_INIT(&pe->wp.watches);
	pe->wp.md = md;
	pe->wp.arg = pe;
	pe->wp.send = peer_send;
	pe->wp.full = peer_full;
	buf_init(&pe->raw);
	buf_init(&pe->out);
}

static void
peer_close(struct peer *pe)
{
	watch_peer_closed(&pe->wp);
	buf_free(&pe->raw);
	buf_free(&pe->out);
}

static void
render_line(struct buf *out, const char *line)
{
	cJSON		*j = cJSON_Parse(line), *ev, *k, *w, *rev;
	char		 s[256];

	if (j == NULL)
		fail_msg("a line that is not JSON: %s", line);
	w = cJSON_GetObjectItem(j, "watch");
	ev = cJSON_GetObjectItem(j, "event");
	k = cJSON_GetObjectItem(j, "key");
	assert_non_null(w);
	assert_true(cJSON_IsString(ev));
	if (strcmp(ev->valuestring, "progress") == 0)
		snprintf(s, sizeof s, "%.0f progress %.0f\n",
		    w->valuedouble, cJSON_GetObjectItem(j, "rev")->valuedouble);
	else if (strcmp(ev->valuestring, "cancelled") == 0) {
		if ((rev = cJSON_GetObjectItem(j, "next_rev")) == NULL)
			rev = cJSON_GetObjectItem(j, "compact_rev");
		assert_non_null(rev);
		snprintf(s, sizeof s, "%.0f cancelled %s %.0f\n",
		    w->valuedouble, cJSON_GetObjectItem(j,
		    "reason")->valuestring, rev->valuedouble);
	} else
		snprintf(s, sizeof s, "%.0f %s %s@%.0f\n", w->valuedouble,
		    strcmp(ev->valuestring, "put") == 0 ? "put" : "del",
		    k->valuestring, cJSON_GetObjectItem(j,
		    "mod_rev")->valuedouble);
	buf_addstr(out, s);
	cJSON_Delete(j);
}

/* The lines received since the last call, rendered. */
static const char *
peer_lines(struct peer *pe)
{
	char	*p, *nl;

	buf_reset(&pe->out);
	buf_addc(&pe->raw, '\0');
	for (p = pe->raw.data; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = '\0';
		render_line(&pe->out, p);
	}
	assert_string_equal(p, "");	/* whole lines only */
	buf_reset(&pe->raw);
	buf_addc(&pe->out, '\0');
	return (pe->out.data);
}

static int	answered;

static void
fake_done(struct req *r)
{
	answered++;
}

/*
 * A watch or unwatch request of pe's; its answer, which must be
 * want (a prefix of it).
 */
static void
op(struct metad *md, struct peer *pe, void (*fn)(struct req *),
    const char *json, const char *want)
{
	struct req	*r = md_fx_req(md, json, &pe->wp, fake_done);
	int		 before = answered;

	fn(r);
	assert_int_equal(answered, before + 1);
	buf_addc(&r->resp, '\0');
	if (strncmp(r->resp.data, want, strlen(want)) != 0)
		fail_msg("%s answered %s, not %s", json, r->resp.data, want);
	req_free(r);
}

/* Each event once, in rev order (seq within a rev), to the watches
 * whose key or prefix matches it, and to no other. */
static void
test_watch_matching_once_in_order(void **state)
{
	struct metad	*md = *state;
	struct peer	 a, b;

	peer_init(&a, md);
	peer_init(&b, md);
	op(md, &a, watch_op_watch, "{\"key\":\"a\"}", "{\"ok\":true,\"watch\":1,");
	op(md, &a, watch_op_watch, "{\"prefix\":\"b/\"}", "{\"ok\":true,\"watch\":2,");
	op(md, &b, watch_op_watch, "{\"key\":\"ab\"}", "{\"ok\":true,\"watch\":3,");
	op(md, &b, watch_op_watch, "{\"prefix\":\"\"}", "{\"ok\":true,\"watch\":4,");
	assert_true(watch_any(md->watch));

	md_fx_write(md, "a");
	md_fx_write(md, "b/1", "ab", "b");
	md_fx_write(md, "c");
	md_fx_write(md, "b/2", "a");
	md_fx_write(md, "-a", "-b/1");
	assert_string_equal(peer_lines(&a),
	    "1 put a@1\n"
	    "2 put b/1@2\n"
	    "2 put b/2@4\n"
	    "1 put a@4\n"
	    "1 del a@5\n"
	    "2 del b/1@5\n");
	assert_string_equal(peer_lines(&b),
	    "4 put a@1\n"
	    "4 put b/1@2\n"
	    "3 put ab@2\n"
	    "4 put ab@2\n"
	    "4 put b@2\n"
	    "4 put c@3\n"
	    "4 put b/2@4\n"
	    "4 put a@4\n"
	    "4 del a@5\n"
	    "4 del b/1@5\n");

	/* An unwatched watch gets nothing more; the others go on. */
	op(md, &a, watch_op_unwatch, "{\"watch\":1}",
	    "{\"ok\":true,\"watch\":1}");
	/* Watch 3 is b's: a cannot end it. */
	op(md, &a, watch_op_unwatch, "{\"watch\":3}", "{\"ok\":false");
	md_fx_write(md, "a", "b/3");
	assert_string_equal(peer_lines(&a), "2 put b/3@6\n");
	assert_string_equal(peer_lines(&b), "4 put a@6\n4 put b/3@6\n");
	/* Closed connections' watches end: nobody is told. */
	watch_peer_closed(&a.wp);
	watch_peer_closed(&b.wp);
	assert_false(watch_any(md->watch));
	md_fx_write(md, "a");
	assert_string_equal(peer_lines(&a), "");
	assert_string_equal(peer_lines(&b), "");
	peer_close(&a);
	peer_close(&b);
}

/* A watch from a rev first replays the history from it (matching events
 * only), then goes on live, with nothing twice and nothing missed; one
 * without from_rev starts after what was delivered. */
static void
test_watch_resumes_from_rev(void **state)
{
	struct metad	*md = *state;
	struct peer	 a;

	peer_init(&a, md);
	md_fx_write(md, "a");
	md_fx_write(md, "x", "a");
	md_fx_write(md, "x");
	md_fx_write(md, "-a");
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"from_rev\":2}",
	    "{\"ok\":true,\"watch\":1,\"rev\":4");
	op(md, &a, watch_op_watch, "{\"prefix\":\"\",\"from_rev\":3}",
	    "{\"ok\":true,\"watch\":2,");
	op(md, &a, watch_op_watch, "{\"key\":\"a\"}", "{\"ok\":true,\"watch\":3,");
	md_fx_run_ms(md, 20);		/* the history reads */
	assert_string_equal(peer_lines(&a),
	    "1 put a@2\n"
	    "1 del a@4\n"
	    "2 put x@3\n"
	    "2 del a@4\n");
	md_fx_write(md, "a");
	assert_string_equal(peer_lines(&a),
	    "1 put a@5\n"
	    "2 put a@5\n"
	    "3 put a@5\n");
	peer_close(&a);
}

/* A connection full when a live event is due has all its watches
 * cancelled, each with the rev to resume from; the event and what
 * follows go to no watch of its, and others' watches go on. */
static void
test_watch_slow_consumer_cancelled(void **state)
{
	struct metad	*md = *state;
	struct peer	 slow, ok;

	peer_init(&slow, md);
	peer_init(&ok, md);
	op(md, &slow, watch_op_watch, "{\"key\":\"a\"}", "{\"ok\":true,\"watch\":1,");
	op(md, &slow, watch_op_watch, "{\"prefix\":\"z\"}", "{\"ok\":true,\"watch\":2,");
	op(md, &ok, watch_op_watch, "{\"key\":\"a\"}", "{\"ok\":true,\"watch\":3,");
	md_fx_write(md, "a");
	md_fx_write(md, "b");
	assert_string_equal(peer_lines(&slow), "1 put a@1\n");
	slow.full = 1;
	md_fx_write(md, "a");
	assert_string_equal(peer_lines(&slow),
	    "1 cancelled slow_consumer 3\n"
	    "2 cancelled slow_consumer 3\n");
	slow.full = 0;
	md_fx_write(md, "a", "z");
	assert_string_equal(peer_lines(&slow), "");
	assert_true(TAILQ_EMPTY(&slow.wp.watches));
	assert_string_equal(peer_lines(&ok),
	    "3 put a@1\n3 put a@3\n3 put a@4\n");

	/* Resumed from its next_rev, it misses nothing. */
	op(md, &slow, watch_op_watch, "{\"key\":\"a\",\"from_rev\":3}",
	    "{\"ok\":true,\"watch\":4,");
	md_fx_run_ms(md, 20);
	assert_string_equal(peer_lines(&slow), "4 put a@3\n4 put a@4\n");
	peer_close(&slow);
	peer_close(&ok);
}

/* A catching-up watch pauses while its connection is full, between
 * revisions, and goes on when it drains. */
static void
test_watch_catch_up_pauses_when_full(void **state)
{
	struct metad	*md = *state;
	struct peer	 a;

	peer_init(&a, md);
	md_fx_write(md, "a", "a/1");
	md_fx_write(md, "a");
	a.full = 1;
	op(md, &a, watch_op_watch, "{\"prefix\":\"a\",\"from_rev\":1}",
	    "{\"ok\":true,\"watch\":1,");
	md_fx_run_ms(md, 20);
	assert_string_equal(peer_lines(&a), "");
	a.full = 0;
	watch_peer_drained(&a.wp);
	md_fx_run_ms(md, 20);
	assert_string_equal(peer_lines(&a),
	    "1 put a@1\n1 put a/1@1\n1 put a@2\n");
	md_fx_write(md, "a/2");
	assert_string_equal(peer_lines(&a), "1 put a/2@3\n");
	peer_close(&a);
}

/*
 * A compaction cancels the watches still catching up from below it, in
 * the order they were made, with the compact rev; not a watch that caught
 * up, nor one live from the start, nor the many idle ones of another
 * connection, though their next revs are below it too.  A watch ended
 * while catching up is not told.
 */
static void
test_watch_compacted_catching_up(void **state)
{
	struct metad	*md = *state;
	struct peer	 a, b;
	char		 json[64];
	int		 i;

	peer_init(&a, md);
	peer_init(&b, md);
	md_fx_write(md, "a");
	md_fx_write(md, "a");
	md_fx_write(md, "a");
	op(md, &a, watch_op_watch, "{\"prefix\":\"c\",\"from_rev\":1}",
	    "{\"ok\":true,\"watch\":1,");
	md_fx_run_ms(md, 20);		/* caught up, live */
	a.full = 1;			/* the next ones pause at once */
	op(md, &a, watch_op_watch, "{\"prefix\":\"a\",\"from_rev\":1}",
	    "{\"ok\":true,\"watch\":2,");
	op(md, &a, watch_op_watch, "{\"key\":\"a\"}",
	    "{\"ok\":true,\"watch\":3,");
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"from_rev\":2}",
	    "{\"ok\":true,\"watch\":4,");
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"from_rev\":3}",
	    "{\"ok\":true,\"watch\":5,");
	op(md, &a, watch_op_unwatch, "{\"watch\":4}",
	    "{\"ok\":true,\"watch\":4}");
	for (i = 0; i < 1000; i++) {
		snprintf(json, sizeof json, "{\"key\":\"b/%d\"}", i);
		op(md, &b, watch_op_watch, json, "{\"ok\":true,");
	}
	md_fx_run_ms(md, 20);
	assert_string_equal(peer_lines(&a), "");
	md_fx_write(md, "x");
	md_fx_write(md, "x", "#5");
	assert_string_equal(peer_lines(&a),
	    "2 cancelled compacted 5\n"
	    "5 cancelled compacted 5\n");
	assert_string_equal(peer_lines(&b), "");
	a.full = 0;
	md_fx_write(md, "a", "b/7");
	assert_string_equal(peer_lines(&a), "3 put a@6\n");
	assert_string_equal(peer_lines(&b), "13 put b/7@6\n");
	peer_close(&a);
	peer_close(&b);
}

/* The index's matches of key, each owner's name once per entry, sorted. */
struct ix_seen {
	char	 s[512];
};

static void
ix_note(void *owner, void *arg)
{
	struct ix_seen	*seen = arg;

	strncat(seen->s, owner, sizeof seen->s - strlen(seen->s) - 2);
	strcat(seen->s, " ");
}

static const char *
ix_match(struct watch_index *ix, const char *key, struct ix_seen *seen)
{
	seen->s[0] = '\0';
	watch_index_match(ix, key, strlen(key), ix_note, seen);
	return (seen->s);
}

static void
ix_count(void *owner, void *arg)
{
	(void)owner;
	(*(unsigned *)arg)++;
}

/*
 * Against a model: keys of a small space added and deleted at random,
 * through many growths of the table and deletes from shared chains (each
 * recomputes its bucket's tag bits), every key of the space matches as
 * many entries as the model holds on it, no more, no fewer.
 */
#define IX_KEYS		4096
#define IX_ENTS		(IX_KEYS * 4)
static void
test_watch_index_model(void **state)
{
	struct watch_index	*ix = watch_index_create();
	struct watch_index_ent	**ent = calloc(IX_ENTS, sizeof *ent);
	unsigned		*key_of = calloc(IX_ENTS, sizeof *key_of);
	unsigned		*have = calloc(IX_KEYS, sizeof *have);
	unsigned		 i, k, n, round, seed = 12345;
	char			 key[32];

	(void)state;
	assert_non_null(ent);
	for (round = 0; round < 8; round++) {
		for (i = 0; i < IX_ENTS; i++) {
			seed = seed * 1103515245u + 12345u;
			if (ent[i] != NULL && (seed >> 16) % 2 == 0) {
				watch_index_del(ix, ent[i]);
				ent[i] = NULL;
				have[key_of[i]]--;
			} else if (ent[i] == NULL && (seed >> 17) % 3 != 0) {
				key_of[i] = (seed >> 8) % IX_KEYS;
				snprintf(key, sizeof key, "k/%u", key_of[i]);
				ent[i] = watch_index_add(ix, key, strlen(key),
				    0, "E");
				have[key_of[i]]++;
			}
		}
		for (k = 0; k < IX_KEYS; k++) {
			n = 0;
			snprintf(key, sizeof key, "k/%u", k);
			watch_index_match(ix, key, strlen(key), ix_count, &n);
			assert_int_equal(n, have[k]);
		}
	}
	for (i = 0; i < IX_ENTS; i++)
		if (ent[i] != NULL)
			watch_index_del(ix, ent[i]);
	assert_int_equal(watch_index_slots(ix), 0);
	watch_index_free(ix);
	free(ent);
	free(key_of);
	free(have);
}

/*
 * Exact keys, then prefixes shortest first, each slot's entries in the
 * order added; a prefix and a key of the same bytes are told apart; slots
 * and prefix lengths go away with their last entry.  Many idle entries on
 * other keys do not match.
 */
static void
test_watch_index(void **state)
{
	struct watch_index	*ix = watch_index_create();
	struct watch_index_ent	*e[8], **idle;
	struct ix_seen		 seen;
	char			 k[32];
	int			 i;

	(void)state;
	e[0] = watch_index_add(ix, "a/b", 3, 0, "K1");
	e[1] = watch_index_add(ix, "a/", 2, 1, "P1");
	e[2] = watch_index_add(ix, "a/b", 3, 1, "P2");
	e[3] = watch_index_add(ix, "", 0, 1, "ALL");
	e[4] = watch_index_add(ix, "a/b", 3, 0, "K2");
	e[5] = watch_index_add(ix, "a/", 2, 1, "P3");
	idle = calloc(20000, sizeof *idle);
	for (i = 0; i < 20000; i++) {
		snprintf(k, sizeof k, "idle/%d", i);
		idle[i] = watch_index_add(ix, k, strlen(k), i % 2, "IDLE");
	}
	assert_int_equal(watch_index_slots(ix), 4 + 20000);
	assert_string_equal(ix_match(ix, "a/b", &seen),
	    "K1 K2 ALL P1 P3 P2 ");
	assert_string_equal(ix_match(ix, "a/bc", &seen), "ALL P1 P3 P2 ");
	assert_string_equal(ix_match(ix, "a/", &seen), "ALL P1 P3 ");
	assert_string_equal(ix_match(ix, "a", &seen), "ALL ");
	assert_string_equal(ix_match(ix, "idle/7", &seen), "ALL IDLE ");
	assert_string_equal(ix_match(ix, "idle/8", &seen), "IDLE ALL ");
	/* idle/7 and idle/71 are prefixes (odd), idle/710 a key. */
	assert_string_equal(ix_match(ix, "idle/710", &seen),
	    "IDLE ALL IDLE IDLE ");
	assert_string_equal(ix_match(ix, "idle/x", &seen), "ALL ");
	for (i = 0; i < 20000; i++)
		watch_index_del(ix, idle[i]);
	free(idle);
	assert_int_equal(watch_index_prefix_lengths(ix), 3);
	watch_index_del(ix, e[3]);
	watch_index_del(ix, e[1]);
	assert_string_equal(ix_match(ix, "a/b", &seen), "K1 K2 P3 P2 ");
	assert_int_equal(watch_index_prefix_lengths(ix), 2);
	watch_index_del(ix, e[5]);
	watch_index_del(ix, e[0]);
	assert_int_equal(watch_index_prefix_lengths(ix), 1);
	assert_string_equal(ix_match(ix, "a/b", &seen), "K2 P2 ");
	watch_index_del(ix, e[2]);
	watch_index_del(ix, e[4]);
	assert_int_equal(watch_index_slots(ix), 0);
	assert_int_equal(watch_index_prefix_lengths(ix), 0);
	assert_string_equal(ix_match(ix, "a/b", &seen), "");
	watch_index_free(ix);
}

/*
 * A watch of several keys and prefixes gets each matching event once,
 * live and replayed from a rev; the watches an event reaches get it in
 * the order they were made, whichever of their keys matched.
 */
static void
test_watch_several_keys_once(void **state)
{
	struct metad	*md = *state;
	struct peer	 a;

	peer_init(&a, md);
	op(md, &a, watch_op_watch, "{\"prefix\":\"\"}", "{\"ok\":true,\"watch\":1,");
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"keys\":[\"a\",\"c\"],"
	    "\"prefixes\":[\"a\",\"b/\"]}", "{\"ok\":true,\"watch\":2,");
	op(md, &a, watch_op_watch, "{\"keys\":[\"b/1\"]}",
	    "{\"ok\":true,\"watch\":3,");
	md_fx_write(md, "a", "b/1", "x");
	md_fx_write(md, "ab", "-a", "c");
	assert_string_equal(peer_lines(&a),
	    "1 put a@1\n2 put a@1\n"
	    "1 put b/1@1\n2 put b/1@1\n3 put b/1@1\n"
	    "1 put x@1\n"
	    "1 put ab@2\n2 put ab@2\n"
	    "1 del a@2\n2 del a@2\n"
	    "1 put c@2\n2 put c@2\n");
	op(md, &a, watch_op_watch, "{\"keys\":[\"c\",\"a\"],\"prefix\":\"a\","
	    "\"prefixes\":[\"\"],\"from_rev\":1}", "{\"ok\":true,\"watch\":4,");
	md_fx_run_ms(md, 20);
	assert_string_equal(peer_lines(&a),
	    "4 put a@1\n4 put b/1@1\n4 put x@1\n"
	    "4 put ab@2\n4 del a@2\n4 put c@2\n");
	/* Bad lists are refused, and refused watches cost nothing. */
	op(md, &a, watch_op_watch, "{\"keys\":[\"\"]}", "{\"ok\":false");
	op(md, &a, watch_op_watch, "{\"keys\":\"a\"}", "{\"ok\":false");
	op(md, &a, watch_op_watch, "{\"prefixes\":[1]}", "{\"ok\":false");
	op(md, &a, watch_op_watch, "{\"keys\":[]}", "{\"ok\":false");
	op(md, &a, watch_op_watch, "{\"from_rev\":1}", "{\"ok\":false");
	op(md, &a, watch_op_unwatch, "{\"watch\":2}", "{\"ok\":true");
	md_fx_write(md, "c");
	assert_string_equal(peer_lines(&a), "1 put c@3\n4 put c@3\n");
	peer_close(&a);
}

/*
 * progress_ms: a watch that had nothing for that long is told the rev
 * its events were all delivered up to, though other keys moved it; an
 * event puts the next one off.  watch_progress answers the rev and sends
 * the line at once.
 */
static void
test_watch_progress(void **state)
{
	struct metad	*md = *state;
	struct peer	 a;

	peer_init(&a, md);
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"progress_ms\":50}",
	    "{\"ok\":true,\"watch\":1,\"rev\":0");
	op(md, &a, watch_op_watch, "{\"key\":\"b\"}", "{\"ok\":true,\"watch\":2,");
	md_fx_write(md, "b");
	md_fx_write(md, "b");
	assert_string_equal(peer_lines(&a), "2 put b@1\n2 put b@2\n");
	md_fx_run_ms(md, 120);
	/* At least one, each at rev 2; nothing of watch 2. */
	assert_true(strncmp(peer_lines(&a), "1 progress 2\n", 13) == 0);
	md_fx_write(md, "a");
	assert_string_equal(peer_lines(&a), "1 put a@3\n");
	op(md, &a, watch_op_progress, "{\"watch\":2}",
	    "{\"ok\":true,\"watch\":2,\"rev\":3}");
	assert_string_equal(peer_lines(&a), "2 progress 3\n");
	op(md, &a, watch_op_progress, "{\"watch\":9}",
	    "{\"ok\":false");
	/* A watch from a rev ahead is current at the rev reached, no more. */
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"from_rev\":100}",
	    "{\"ok\":true,\"watch\":3,");
	op(md, &a, watch_op_progress, "{\"watch\":3}",
	    "{\"ok\":true,\"watch\":3,\"rev\":3}");
	assert_string_equal(peer_lines(&a), "3 progress 3\n");
	op(md, &a, watch_op_watch, "{\"key\":\"a\",\"progress_ms\":5}",
	    "{\"ok\":false");
	peer_close(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_watch_matching_once_in_order, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_watch_resumes_from_rev,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_watch_slow_consumer_cancelled, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_watch_catch_up_pauses_when_full, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_watch_compacted_catching_up, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test(test_watch_index),
		cmocka_unit_test(test_watch_index_model),
		cmocka_unit_test_setup_teardown(test_watch_several_keys_once,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_watch_progress,
		    md_fx_setup, md_fx_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
