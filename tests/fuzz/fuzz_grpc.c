/*
 * libFuzzer target: the reassembly of gRPC messages (a 5-byte prefix, a
 * flag and a big-endian length, then the protobuf) from HTTP/2 DATA
 * chunks, in daemon/store/etcd/etcd_grpc.c.  The framing is not a function
 * of its own: it is in the session's callbacks, static there, so this file
 * includes etcd_grpc.c and calls them as nghttp2 would: the DATA callback
 * (etcd_gstream_data_cb: a call's answer, gathered whole; a stream's
 * messages, each to its mcb as soon as it is complete) with each chunk,
 * then the close callback (etcd_gstream_close_cb: a call's answer checked
 * and decoded).  The session is a real nghttp2 client session holding the
 * one stream (its HEADERS written to memory and thrown away), so that the
 * stream's user data, the reset of a refused stream and the end of the
 * call go through libnghttp2; no socket, no frame parsing.
 *
 * The input: a byte choosing call or stream (bit 0: a stream), a raw
 * answer (bit 1) and the rpc (the rest, modulo ETCD_PB_NONE); a byte for
 * the limit (max_bytes, 0 to 255, so that small inputs pass it); then the
 * chunks, each a length byte and that many bytes (the last one short if
 * the input is).  Each chunk is a buffer of exactly its size.
 *
 * Abort unless what comes out is what the bytes say, read by a model
 * here: a stream's mcb gets exactly the complete messages, in order,
 * until the first with a flag, a length past the limit or a body etcd_pb
 * refuses, and then the stream ends at once; a stream never holds more
 * than a prefix and max_bytes, nor a prefix saying more than max_bytes; a
 * call is refused (-1) once its prefix says more than max_bytes (DATA
 * past its message end it at once, 0), else it answers 200 iff the DATA are one message, unflagged, of exactly its
 * length, that etcd_pb_check (raw) or etcd_pb_decode takes, with that
 * message (raw) or its JSON, else 0.
 */
#include "store/etcd/etcd_grpc.c"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct event_base	*base;
static struct etcd_grpc		 g;

/* What the stream's mcb got, and what the call's cb got. */
static struct buf	 got;		/* each message: 4-byte length, bytes */
static int		 answered, answer_status;
static struct buf	 answer_body;
static cJSON		*answer_reply;

static void
fuzz_fail(const char *what)
{
	fprintf(stderr, "gRPC framing: %s\n", what);
	abort();
}

static int
fuzz_msg_cb(void *arg, const uint8_t *p, size_t n)
{
	uint8_t	 len[4] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16),
		    (uint8_t)(n >> 8), (uint8_t)n };

	buf_add(&got, len, 4);
	buf_add(&got, p, n);
	return (etcd_pb_check(ETCD_PB_WATCH, p, n) == 0 ? 0 : -1);
}

static void
fuzz_done_cb(void *arg, int status, struct buf *body, cJSON *reply)
{
	answered++;
	answer_status = status;
	buf_reset(&answer_body);
	buf_add(&answer_body, body->data, body->len);
	answer_reply = reply;
}

static void
fuzz_timer_cb(evutil_socket_t fd, short what, void *arg)
{
}

/* The stream's model: the messages mcb must get, and whether it ends. */
static int
fuzz_stream_model(const uint8_t *p, size_t len, size_t max, struct buf *want)
{
	size_t		 off = 0;
	uint32_t	 n;

	while (len - off >= 5) {
		n = etcd_grpc_msglen(p + off);
		if (p[off] != 0 || n > max)
			return (-1);
		if (len - off - 5 < n)
			return (0);
		buf_add(want, p + off + 1, 4);
		buf_add(want, p + off + 5, n);
		if (etcd_pb_check(ETCD_PB_WATCH, p + off + 5, n) != 0)
			return (-1);
		off += 5 + (size_t)n;
	}
	return (0);
}

/* The call's model: its status, given its DATA whole. */
static int
fuzz_call_model(enum etcd_pb_rpc rpc, int raw, const uint8_t *p, size_t len,
    size_t max, cJSON **reply)
{
	*reply = NULL;
	if (len >= 5 && etcd_grpc_msglen(p) > max)
		return (-1);
	if (len < 5 || p[0] != 0 || etcd_grpc_msglen(p) != len - 5)
		return (0);
	if (raw)
		return (etcd_pb_check(rpc, p + 5, len - 5) == 0 ? 200 : 0);
	*reply = etcd_pb_decode(rpc, p + 5, len - 5);
	return (*reply != NULL ? 200 : 0);
}

/* A client session with one stream open, st its user data. */
static void
fuzz_open(struct etcd_gconn *c, struct etcd_gstream *st)
{
	nghttp2_session_callbacks	*cbs;
	const uint8_t			*out;
	nghttp2_nv			 nva[] = {
		{ (uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0 },
		{ (uint8_t *)":path", (uint8_t *)"/x", 5, 2, 0 },
		{ (uint8_t *)":authority", (uint8_t *)"a", 10, 1, 0 },
	};

	if (nghttp2_session_callbacks_new(&cbs) != 0 ||
	    nghttp2_session_client_new(&c->s, cbs, c) != 0)
		fatalx("nghttp2 session");
	nghttp2_session_callbacks_del(cbs);
	st->id = nghttp2_submit_request(c->s, NULL, nva,
	    sizeof nva / sizeof nva[0], NULL, st);
	if (st->id < 0)
		fatalx("nghttp2_submit_request");
	while (nghttp2_session_mem_send(c->s, &out) > 0)
		;	/* the stream opens as its HEADERS go */
	if (nghttp2_session_get_stream_user_data(c->s, st->id) != st)
		fatalx("the stream did not open");
	TAILQ_INSERT_TAIL(&c->streams, st, entry);
}

/* Each chunk through the DATA callback; returns their concatenation. */
static void
fuzz_feed(struct etcd_gconn *c, struct etcd_gstream *st, const uint8_t *p,
    size_t n, size_t max, struct buf *all)
{
	uint8_t	*chunk;
	size_t	 len;

	while (n > 0) {
		len = p[0] < n - 1 ? p[0] : n - 1;
		chunk = xmalloc(len > 0 ? len : 1);
		memcpy(chunk, p + 1, len);
		if (st->c != NULL || st->mcb == NULL)
			buf_add(all, chunk, len);
		etcd_gstream_data_cb(c->s, 0, st->id, chunk, len, c);
		free(chunk);
		p += 1 + len;
		n -= 1 + len;
		if (st->c == NULL)
			continue;	/* ended: nghttp2 drops its DATA */
		if (st->in.len > max + 5)
			fuzz_fail("more than a message held");
		if (st->mcb != NULL && st->in.len >= 5 &&
		    etcd_grpc_msglen(st->in.data) > max)
			fuzz_fail("a prefix past the limit held");
	}
}

static void
fuzz_check_stream(struct etcd_gstream *st, const struct buf *all, size_t max)
{
	struct buf	 want;
	int		 ended;

	buf_init(&want);
	ended = fuzz_stream_model((const uint8_t *)all->data, all->len, max,
	    &want) == -1;
	if (want.len != got.len || (want.len > 0 &&
	    memcmp(want.data, got.data, want.len) != 0))
		fuzz_fail("a stream's messages are not the DATA's");
	if (ended != (st->c == NULL))
		fuzz_fail(ended ? "a malformed message did not end the stream" :
		    "a stream ended on good DATA");
	buf_free(&want);
}

static void
fuzz_check_call(enum etcd_pb_rpc rpc, int raw, const struct buf *all,
    size_t max)
{
	cJSON	*reply;
	int	 status;

	status = fuzz_call_model(rpc, raw, (const uint8_t *)all->data,
	    all->len, max, &reply);
	if (answered != 1 || answer_status != status)
		fuzz_fail("a call's status is not the DATA's");
	if (status == 200 && raw && (answer_body.len != all->len - 5 ||
	    memcmp(answer_body.data, all->data + 5, answer_body.len) != 0))
		fuzz_fail("a raw answer is not the message");
	if (status == 200 && !raw && !cJSON_Compare(reply, answer_reply, 1))
		fuzz_fail("an answer's JSON is not the message's");
	cJSON_Delete(reply);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init("fuzz_grpc", LOG_LEVEL_ERROR);
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	memset(&g, 0, sizeof g);
	g.base = base;
	TAILQ_INIT(&g.done);
	if ((g.fire = event_new(base, -1, 0, etcd_grpc_fire, &g)) == NULL)
		fatalx("event_new");
	buf_init(&got);
	buf_init(&answer_body);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct etcd_gconn	*c;
	struct etcd_gstream	*st;
	struct buf		 all;
	enum etcd_pb_rpc	 rpc;
	int			 stream, raw;

	if (size < 2)
		return (0);
	stream = data[0] & 1;
	raw = (data[0] >> 1) & 1;
	rpc = stream ? ETCD_PB_WATCH : (enum etcd_pb_rpc)((data[0] >> 2) %
	    ETCD_PB_NONE);
	g.max_bytes = data[1];
	c = xcalloc(1, sizeof *c);
	c->g = &g;
	TAILQ_INIT(&c->streams);
	st = xcalloc(1, sizeof *st);
	st->g = &g;
	st->c = c;
	st->rpc = rpc;
	buf_init(&st->out);
	buf_init(&st->in);
	st->http = 200;
	st->code = 0;
	st->raw = stream ? 0 : raw;
	st->cb = fuzz_done_cb;
	st->mcb = stream ? fuzz_msg_cb : NULL;
	st->idle_ms = 60000;
	if ((st->timer = evtimer_new(base, fuzz_timer_cb, st)) == NULL)
		fatalx("evtimer_new");
	fuzz_open(c, st);
	buf_init(&all);
	buf_reset(&got);
	answered = 0;
	answer_reply = NULL;
	fuzz_feed(c, st, data + 2, size - 2, g.max_bytes, &all);
	if (stream)
		fuzz_check_stream(st, &all, g.max_bytes);
	if (st->c != NULL)	/* the trailers came: grpc-status 0 */
		etcd_gstream_close_cb(c->s, st->id, NGHTTP2_NO_ERROR, c);
	if (st->c != NULL)
		fuzz_fail("the stream was not finished at its end");
	etcd_grpc_fire(-1, 0, &g);	/* st's cb, and st freed */
	if (!stream)
		fuzz_check_call(rpc, raw, &all, g.max_bytes);
	cJSON_Delete(answer_reply);
	buf_free(&all);
	nghttp2_session_del(c->s);
	free(c);
	return (0);
}
