/* Per-port M_Keys from one secret (see mkeys.h). */
#include "sm/model/mkeys.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sm/base/wfile.h"
#include "sm/model/config.h"

#define SECRET_HEX	(2 * MKEYS_SECRET_LEN)
#define SECRET_FILE_MAX	64	/* 32 digits and a newline, with room to see more */
#define SECRET_MODE	0600
#define OPEN_TO_OTHERS	(S_IRWXG | S_IRWXO)

uint64_t mkeys_derive(const uint8_t secret[MKEYS_SECRET_LEN], uint64_t port_guid)
{
	uint8_t in[8], out[crypto_shorthash_BYTES];
	uint64_t g = port_guid;
	for (int i = 7; i >= 0; i--, g >>= 8)
		in[i] = (uint8_t)g;
	crypto_shorthash(out, in, sizeof(in), secret);
	uint64_t v = 0;
	for (unsigned i = 0; i < sizeof(out); i++)
		v = v << 8 | out[i];
	return v ? v : 1;	/* 0 is "no M_Key": the port would be open */
}

uint64_t mkeys_port_key(const struct mkeys *k, uint64_t port_guid)
{
	if (!k || !k->have_secret || !port_guid)
		return 0;
	return mkeys_derive(k->secret, port_guid);
}

/* text: exactly 32 hex digits, then at most one newline. */
static int parse_secret(const char *text, size_t n, uint8_t secret[MKEYS_SECRET_LEN])
{
	if (n == SECRET_HEX + 1 && text[SECRET_HEX] == '\n')
		n--;
	if (n != SECRET_HEX)
		return -1;
	size_t bin_len = 0;
	const char *end = NULL;
	if (sodium_hex2bin(secret, MKEYS_SECRET_LEN, text, n, NULL, &bin_len,
			   &end) != 0 || bin_len != MKEYS_SECRET_LEN ||
	    end != text + n)
		return -1;
	return 0;
}

static int make_secret(const char *path, uint8_t secret[MKEYS_SECRET_LEN],
		       char *err, size_t errlen)
{
	struct wfile w;
	char hex[SECRET_HEX + 1];
	if (wfile_open(&w, path, err, errlen) < 0)
		return -1;
	/* 0600 before a byte of the secret is written */
	if (fchmod(fileno(w.fp), SECRET_MODE) < 0) {
		snprintf(err, errlen, "chmod of its temporary file: %s", strerror(errno));
		wfile_abort(&w);
		return -1;
	}
	randombytes_buf(secret, MKEYS_SECRET_LEN);
	sodium_bin2hex(hex, sizeof(hex), secret, MKEYS_SECRET_LEN);
	fprintf(w.fp, "%s\n", hex);
	sodium_memzero(hex, sizeof(hex));
	return wfile_commit(&w, err, errlen);
}

int mkeys_secret_load(const char *path, int create,
		      uint8_t secret[MKEYS_SECRET_LEN], char *err, size_t errlen)
{
	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium cannot be initialised");
		return -1;
	}
	char why[512];
	FILE *f = rfile_open(path, SECRET_FILE_MAX, why, sizeof(why));
	if (!f && errno == ENOENT) {
		if (!create)
			return MKEYS_ABSENT;
		if (make_secret(path, secret, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "M_Key secret %s cannot be made: %s",
				 path, why);
			return -1;
		}
		return MKEYS_MADE;
	}
	if (!f) {
		snprintf(err, errlen, "M_Key secret: %s", why);
		return -1;
	}
	struct stat st;
	if (fstat(fileno(f), &st) < 0) {
		snprintf(err, errlen, "M_Key secret %s: %s", path, strerror(errno));
		fclose(f);
		return -1;
	}
	if (st.st_mode & OPEN_TO_OTHERS) {
		snprintf(err, errlen,
			 "M_Key secret %s: mode %04o lets group or others at it (want 0600: chmod 600 %s)",
			 path, (unsigned)(st.st_mode & 07777), path);
		fclose(f);
		return -1;
	}
	char text[SECRET_FILE_MAX + 1];
	size_t n = fread(text, 1, sizeof(text), f);
	int bad = ferror(f);
	fclose(f);
	int ok = !bad && parse_secret(text, n, secret) == 0;
	sodium_memzero(text, sizeof(text));
	if (!ok) {
		snprintf(err, errlen,
			 "M_Key secret %s: not %d hex digits and a newline (remove it to have a new one made: every port's key changes)",
			 path, SECRET_HEX);
		return -1;
	}
	return MKEYS_READ;
}

const char *mkeys_secret_path(const struct config *c, char *buf, size_t len)
{
	if (c->mkey_secret_file[0])
		snprintf(buf, len, "%s", c->mkey_secret_file);
	else
		snprintf(buf, len, "%s/%s", c->state_dir, MKEYS_SECRET_FILE);
	return buf;
}
