/* SPDX-License-Identifier: MIT */
/*
 * test_redact.c - the command-line rule (common/redact.c): each secret-carrying form it knows is
 * redacted and what leads to a secret without being one is kept, for the programs it names, in
 * wrappers and in shell command lines; its output is stable under a second pass; a short
 * output buffer drops whole arguments and never leaves a piece of a secret.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "redact.h"

#define MAXBLOB 8192

/* NULL-terminated words -> NUL-separated blob; returns its length. */
static size_t blob_of(const char *const *args, char *blob)
{
	size_t n = 0;
	for (unsigned i = 0; args[i]; i++) {
		size_t k = strlen(args[i]);
		if (i)
			blob[n++] = 0;
		memcpy(blob + n, args[i], k);
		n += k;
	}
	return n;
}

/* The blob with its NULs shown as " | ", in a static buffer. */
static const char *shown(const char *blob, size_t n)
{
	static char text[MAXBLOB * 2];
	size_t t = 0;
	for (size_t i = 0; i < n; i++) {
		if (blob[i]) {
			text[t++] = blob[i];
		} else {
			memcpy(text + t, " | ", 3);
			t += 3;
		}
	}
	text[t] = 0;
	return text;
}

/* Redacts args; checks the count, that a second pass changes nothing, and returns the
 * shown form. */
static const char *redact_n(const char *const *args, unsigned want_count)
{
	static char in[MAXBLOB], out[MAXBLOB], again[MAXBLOB];
	size_t n = blob_of(args, in);
	unsigned count = 99, count2 = 99;
	size_t m = ct_argv_redact(in, n, false, out, sizeof(out), &count);
	size_t m2 = ct_argv_redact(out, m, false, again, sizeof(again), &count2);
	if (count != want_count)
		fail_msg("%u values redacted, expected %u: %s", count, want_count, shown(out, m));
	assert_int_equal(count2, 0);
	assert_int_equal(m2, m);
	assert_memory_equal(again, out, m);
	return shown(out, m);
}

#define R(count, ...) redact_n((const char *const[]){ __VA_ARGS__, NULL }, count)

static void openssl_enc(void **state)
{
	(void)state;
	/* the command of the issue: a password, a key and an IV */
	assert_string_equal(R(3, "openssl", "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:HUNTER2SECRET",
			      "-K", "00112233445566778899aabbccddeeff", "-iv",
			      "0f0e0d0c0b0a09080706050403020100", "-in", "/tmp/x"),
			    "openssl | enc | -aes-256-cbc | -pbkdf2 | -pass | pass:<redacted> | -K | "
			    "<redacted> | -iv | <redacted> | -in | /tmp/x");
	/* -k is a password, -kfile a file name; -S a salt (not secret) */
	assert_string_equal(R(1, "/usr/bin/openssl", "enc", "-k", "s3cret", "-kfile", "/etc/k", "-S", "0102"),
			    "/usr/bin/openssl | enc | -k | <redacted> | -kfile | /etc/k | -S | 0102");
	/* OpenSSL's other spellings: --opt and -opt=value */
	assert_string_equal(R(3, "openssl", "enc", "--pass", "pass:x1y2z3", "-K=0011aabb", "--iv=aabbccdd"),
			    "openssl | enc | --pass | pass:<redacted> | -K=<redacted> | --iv=<redacted>");
	/* the option last, without its value: nothing to hide, nothing breaks */
	assert_string_equal(R(0, "openssl", "enc", "-K"), "openssl | enc | -K");
}

static void openssl_passphrase_sources(void **state)
{
	(void)state;
	/* file:, fd:, env: and stdin lead to a password without being one */
	assert_string_equal(R(0, "openssl", "rsa", "-passin", "file:/etc/pw", "-passout", "fd:3"),
			    "openssl | rsa | -passin | file:/etc/pw | -passout | fd:3");
	assert_string_equal(R(0, "openssl", "pkcs12", "-password", "env:PW", "-passin", "stdin"),
			    "openssl | pkcs12 | -password | env:PW | -passin | stdin");
	/* a form OpenSSL does not know is a password typed without pass: */
	assert_string_equal(R(2, "openssl", "req", "-passout", "hunter2", "-passin=pass:a b"),
			    "openssl | req | -passout | <redacted> | -passin=pass:<redacted>");
}

static void openssl_other_secrets(void **state)
{
	(void)state;
	assert_string_equal(R(1, "openssl", "dgst", "-sha256", "-hmac", "macsecret", "f"),
			    "openssl | dgst | -sha256 | -hmac | <redacted> | f");
	assert_string_equal(R(1, "openssl", "s_client", "-psk_identity", "id", "-psk", "0a0b0c"),
			    "openssl | s_client | -psk_identity | id | -psk | <redacted>");
	assert_string_equal(R(2, "openssl", "mac", "-macopt", "digest:SHA256", "-macopt", "hexkey:0011",
			      "-kdfopt", "pass:pw", "HMAC"),
			    "openssl | mac | -macopt | digest:SHA256 | -macopt | hexkey:<redacted> | "
			    "-kdfopt | pass:<redacted> | HMAC");
	/* -key is the CA key's password in `openssl ca`, a key file elsewhere */
	assert_string_equal(R(1, "openssl", "ca", "-key", "capw", "-in", "r.csr"),
			    "openssl | ca | -key | <redacted> | -in | r.csr");
	assert_string_equal(R(0, "openssl", "req", "-key", "k.pem"), "openssl | req | -key | k.pem");
}

static void sshpass_and_ssh(void **state)
{
	(void)state;
	/* ssh's own -p (a port) after sshpass's command is not sshpass's option */
	assert_string_equal(R(1, "sshpass", "-p", "pw", "ssh", "-p", "2222", "host"),
			    "sshpass | -p | <redacted> | ssh | -p | 2222 | host");
	assert_string_equal(R(1, "sshpass", "-ppw", "scp", "a", "b:"),
			    "sshpass | -p<redacted> | scp | a | b:");
	assert_string_equal(R(0, "ssh", "-p", "22", "-o", "PasswordAuthentication=no", "h"),
			    "ssh | -p | 22 | -o | PasswordAuthentication=no | h");
}

static void curl_forms(void **state)
{
	(void)state;
	assert_string_equal(R(1, "curl", "-u", "alice:pw", "https://h/"),
			    "curl | -u | alice:<redacted> | https://h/");
	assert_string_equal(R(2, "curl", "-sSualice:pw", "--proxy-user=bob:pw2", "https://h/"),
			    "curl | -sSualice:<redacted> | --proxy-user=bob:<redacted> | https://h/");
	assert_string_equal(R(1, "curl", "-sSu", "alice:pw", "https://h/"),
			    "curl | -sSu | alice:<redacted> | https://h/");
	/* a user name alone: curl asks for the password */
	assert_string_equal(R(0, "curl", "--user", "alice", "https://h/"),
			    "curl | --user | alice | https://h/");
	assert_string_equal(R(2, "curl", "-H", "Authorization: Bearer abc", "-H", "Accept: */*", "--header",
			      "X-Api-Key: k", "https://h/"),
			    "curl | -H | Authorization: <redacted> | -H | Accept: */* | --header | "
			    "X-Api-Key: <redacted> | https://h/");
	assert_string_equal(R(3, "curl", "--oauth2-bearer", "tok", "-x", "u:p@proxy:3128", "--proxy",
			      "http://u:p@proxy:3128", "https://h/"),
			    "curl | --oauth2-bearer | <redacted> | -x | u:<redacted>@proxy:3128 | "
			    "--proxy | http://u:<redacted>@proxy:3128 | https://h/");
	assert_string_equal(R(2, "curl", "-E", "client.pem:keypw", "--cert", "a\\:b.pem", "--pass", "kp"),
			    "curl | -E | client.pem:<redacted> | --cert | a\\:b.pem | --pass | <redacted>");
}

static void urls_anywhere(void **state)
{
	(void)state;
	assert_string_equal(R(1, "git", "clone", "https://alice:ghp_tok@github.com/x/y.git"),
			    "git | clone | https://alice:<redacted>@github.com/x/y.git");
	assert_string_equal(R(3, "psql", "--dbname=postgresql://u:p@db/x?x=1",
			      "ftp://a:b@h/ and http://c:d@e/"),
			    "psql | --dbname=postgresql://u:<redacted>@db/x?x=1 | "
			    "ftp://a:<redacted>@h/ and http://c:<redacted>@e/");
	/* no password in these */
	assert_string_equal(R(0, "x", "https://h/a@b", "ssh://git@h/r", "user@host:path"),
			    "x | https://h/a@b | ssh://git@h/r | user@host:path");
}

static void mysql_family(void **state)
{
	(void)state;
	assert_string_equal(R(1, "mysql", "-uroot", "-pSECRET", "db"), "mysql | -uroot | -p<redacted> | db");
	/* -p and --password alone prompt: the next word is the database */
	assert_string_equal(R(0, "mysqldump", "-p", "db"), "mysqldump | -p | db");
	assert_string_equal(R(0, "mariadb", "--password", "db"), "mariadb | --password | db");
	assert_string_equal(R(1, "mysql", "--password=pw", "-P3306", "-hpg"),
			    "mysql | --password=<redacted> | -P3306 | -hpg");
}

static void generic_rules(void **state)
{
	(void)state;
	assert_string_equal(R(3, "app", "--password", "pw", "--db-password=x",
			      "-Djavax.net.ssl.keyStorePassword=y", "--password-file=/etc/pw"),
			    "app | --password | <redacted> | --db-password=<redacted> | "
			    "-Djavax.net.ssl.keyStorePassword=<redacted> | --password-file=/etc/pw");
	assert_string_equal(R(2, "env", "MYSQL_PWD=x", "OLDPWD=/home", "API_TOKEN=t", "prog"),
			    "env | MYSQL_PWD=<redacted> | OLDPWD=/home | API_TOKEN=<redacted> | prog");
	assert_string_equal(R(1, "gpg", "--batch", "--passphrase", "pp", "-c", "f"),
			    "gpg | --batch | --passphrase | <redacted> | -c | f");
	/* openvpn's --auth-user-pass and --askpass name files */
	assert_string_equal(R(0, "openvpn", "--auth-user-pass", "/etc/up", "--askpass", "/etc/a"),
			    "openvpn | --auth-user-pass | /etc/up | --askpass | /etc/a");
}

static void wrappers_and_shell(void **state)
{
	(void)state;
	assert_string_equal(R(1, "sudo", "-u", "root", "timeout", "5", "openssl", "enc", "-k", "pw"),
			    "sudo | -u | root | timeout | 5 | openssl | enc | -k | <redacted>");
	assert_string_equal(R(2, "sh", "-c", "openssl enc -k 'my secret' -in x; curl -u a:b h"),
			    "sh | -c | openssl enc -k <redacted> -in x; curl -u a:<redacted> h");
	/* NAME=VALUE before a shell split: the whole rest goes (a value may hold spaces) */
	assert_string_equal(R(1, "ssh", "host", "PASSWORD=\"a b\" ./run"),
			    "ssh | host | PASSWORD=<redacted>");
	/* the program is a variable: a hex key after -K or -iv is one wherever it stands */
	assert_string_equal(R(2, "sh", "-c",
			      "exec \"$1\" enc -K 00112233445566778899aabbccddeeff "
			      "-iv=0f0e0d0c0b0a09080706050403020100 -in x",
			      "sh", "/usr/bin/openssl"),
			    "sh | -c | exec \"$1\" enc -K <redacted> -iv=<redacted> -in x | sh | "
			    "/usr/bin/openssl");
	assert_string_equal(R(0, "ssh", "-K", "host", "curl", "-K", "conf.txt", "app", "--key", "k.pem"),
			    "ssh | -K | host | curl | -K | conf.txt | app | --key | k.pem");
	/* a space-holding value of a known option is that value, not a command line */
	assert_string_equal(R(1, "app", "--password=two words"), "app | --password=<redacted>");
}

static void other_programs(void **state)
{
	(void)state;
	assert_string_equal(R(1, "zip", "-rP", "zpw", "a.zip", "dir"),
			    "zip | -rP | <redacted> | a.zip | dir");
	assert_string_equal(R(1, "unzip", "-P", "zpw", "a.zip"), "unzip | -P | <redacted> | a.zip");
	assert_string_equal(R(1, "7z", "a", "-psevenpw", "x.7z"), "7z | a | -p<redacted> | x.7z");
	assert_string_equal(R(2, "ldapsearch", "-xw", "lpw", "-D", "cn=x", "-w", "lpw2"),
			    "ldapsearch | -xw | <redacted> | -D | cn=x | -w | <redacted>");
	assert_string_equal(R(1, "smbclient", "-U", "dom\\u%spw", "//h/s"),
			    "smbclient | -U | dom\\u%<redacted> | //h/s");
	assert_string_equal(R(1, "mount", "-t", "cifs", "-o", "username=u,password=p,vers=3", "//h/s",
			      "/mnt"),
			    "mount | -t | cifs | -o | username=u,password=<redacted>,vers=3 | //h/s | /mnt");
	assert_string_equal(R(1, "docker", "login", "-p", "dpw", "reg"),
			    "docker | login | -p | <redacted> | reg");
	assert_string_equal(R(0, "docker", "run", "-p", "8080:80", "img"),
			    "docker | run | -p | 8080:80 | img");
	assert_string_equal(R(1, "redis-cli", "-a", "rpw", "ping"), "redis-cli | -a | <redacted> | ping");
	assert_string_equal(R(1, "xfreerdp", "/u:me", "/p:rdp", "/v:h"),
			    "xfreerdp | /u:me | /p:<redacted> | /v:h");
	/* an IV is never recorded either */
	assert_string_equal(R(1, "kcapi-enc", "-e", "-c", "cbc(aes)", "--iv", "00ff", "--keyfd", "3"),
			    "kcapi-enc | -e | -c | cbc(aes) | --iv | <redacted> | --keyfd | 3");
}

static void exe_only_and_layout(void **state)
{
	(void)state;
	char out[64];
	unsigned count = 9;
	static const char in[] = "openssl\0enc\0-k\0pw";
	size_t m = ct_argv_redact(in, sizeof(in) - 1, true, out, sizeof(out), &count);
	assert_int_equal(m, 7);
	assert_memory_equal(out, "openssl", 7);
	assert_int_equal(count, 0);
	/* empty arguments keep their place; a trailing NUL is not an argument */
	static const char gaps[] = "a\0\0b\0";
	m = ct_argv_redact(gaps, sizeof(gaps) - 1, false, out, sizeof(out), &count);
	assert_int_equal(m, 4);
	assert_memory_equal(out, "a\0\0b", 4);
	assert_int_equal(ct_argv_redact("", 0, false, out, sizeof(out), NULL), 0);
}

/* Every output size: whole arguments only, and never a byte of a secret. */
static void short_output_never_leaks(void **state)
{
	(void)state;
	static const char in[] =
		"openssl\0enc\0-pass\0pass:HUNTER2SECRET\0-K\0DEADBEEFCAFE0001\0"
		"sh\0-c\0curl -u bob:TOPSECRETPW https://h/";
	char out[sizeof(in) + 64];
	size_t full = ct_argv_redact(in, sizeof(in) - 1, false, out, sizeof(out), NULL);
	for (size_t cap = 0; cap <= full; cap++) {
		unsigned count;
		size_t m = ct_argv_redact(in, sizeof(in) - 1, false, out, cap, &count);
		assert_true(m <= cap);
		assert_true(m == 0 || m == full || out[m - 1] != 0);
		out[m] = 0;
		for (size_t i = 0; i < m; i++)
			if (!out[i])
				out[i] = ' ';
		assert_null(strstr(out, "HUNTER2"));
		assert_null(strstr(out, "DEADBEEF"));
		assert_null(strstr(out, "TOPSECRET"));
		/* each kept argument is whole: the output is a prefix of the full one */
		char full_out[sizeof(out)];
		size_t f = ct_argv_redact(in, sizeof(in) - 1, false, full_out, sizeof(full_out), NULL);
		for (size_t i = 0; i < f; i++)
			if (!full_out[i])
				full_out[i] = ' ';
		assert_memory_equal(out, full_out, m);
		assert_true(m == 0 || m == f || full_out[m] == ' ');
	}
}

/* A shell word too long to read is not kept. */
static void long_shell_word(void **state)
{
	(void)state;
	static char in[MAXBLOB], out[MAXBLOB];
	size_t n = (size_t)snprintf(in, sizeof(in), "sh%c-c%cecho ", 0, 0);
	memset(in + n, 'x', 3000);
	n += 3000;
	unsigned count;
	size_t m = ct_argv_redact(in, n, false, out, sizeof(out), &count);
	assert_int_equal(count, 1);
	assert_string_equal(shown(out, m), "sh | -c | echo <redacted>");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(openssl_enc),
		cmocka_unit_test(openssl_passphrase_sources),
		cmocka_unit_test(openssl_other_secrets),
		cmocka_unit_test(sshpass_and_ssh),
		cmocka_unit_test(curl_forms),
		cmocka_unit_test(urls_anywhere),
		cmocka_unit_test(mysql_family),
		cmocka_unit_test(generic_rules),
		cmocka_unit_test(wrappers_and_shell),
		cmocka_unit_test(other_programs),
		cmocka_unit_test(exe_only_and_layout),
		cmocka_unit_test(short_output_never_leaks),
		cmocka_unit_test(long_shell_word),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
