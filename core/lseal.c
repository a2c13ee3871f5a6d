/*
 * lseal.c — authenticated sealing and hashing for the Lua runtime, on OpenSSL libcrypto:
 * core.seal / core.unseal (AES-256-GCM), core.sha256, core.random_bytes.
 *
 * Used by moonmcp.mrtr to protect the requestState of multi round-trip requests, which
 * travels through the client and comes back as attacker-controlled input. A sealed box is
 *
 *     nonce (12 bytes, random) || ciphertext (same length as the plaintext) || tag (16)
 *
 * with optional additional authenticated data (AAD) bound into the tag but not stored.
 * unseal checks the tag before returning a single byte: a box that was truncated,
 * altered, sealed with another key or with other AAD yields nil, "message".
 *
 * Nonces are drawn from OpenSSL's CSPRNG for every seal. With 96-bit random nonces one
 * key stays within GCM's safety bound (collision probability <= 2^-32) for 2^32 seals.
 *
 * Every function is synchronous and short (no yield, no libuv): each allocates one
 * scratch buffer and one cipher context, frees both on every path (goto fail), and
 * wipes plaintext scratch memory before freeing it. Arguments are checked before any
 * allocation, so misuse raises without leaking.
 */
#include "lcore.h"

#include <lauxlib.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { KEY_LEN = 32, NONCE_LEN = 12, TAG_LEN = 16, SHA256_LEN = 32, MAX_RANDOM = 1024 };

static const unsigned char *check_key(lua_State *L, int arg)
{
    size_t len;
    const char *key = luaL_checklstring(L, arg, &len);
    if (len != KEY_LEN) luaL_argerror(L, arg, "the key must be exactly 32 bytes");
    return (const unsigned char *)key;
}

/* seal(key, plaintext [, aad]) -> box (binary string). Raises on misuse or when
 * libcrypto fails (out of memory): sealing has no operational failure mode. */
static int l_seal(lua_State *L)
{
    const unsigned char *key = check_key(L, 1);
    size_t len, aad_len = 0;
    const unsigned char *pt = (const unsigned char *)luaL_checklstring(L, 2, &len);
    const unsigned char *aad = (const unsigned char *)luaL_optlstring(L, 3, "", &aad_len);
    if (len > (size_t)INT32_MAX - NONCE_LEN - TAG_LEN)
        return luaL_argerror(L, 2, "plaintext too large");

    EVP_CIPHER_CTX *cx = NULL;
    unsigned char *box = malloc(NONCE_LEN + len + TAG_LEN);
    int out = 0, fin = 0, ok = 0;
    if (!box) goto fail;
    if (RAND_bytes(box, NONCE_LEN) != 1) goto fail;
    cx = EVP_CIPHER_CTX_new();
    if (!cx) goto fail;
    if (EVP_EncryptInit_ex(cx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) != 1 ||
        EVP_EncryptInit_ex(cx, NULL, NULL, key, box) != 1)
        goto fail;
    if (aad_len > 0 && EVP_EncryptUpdate(cx, NULL, &out, aad, (int)aad_len) != 1) goto fail;
    if (EVP_EncryptUpdate(cx, box + NONCE_LEN, &out, pt, (int)len) != 1 ||
        EVP_EncryptFinal_ex(cx, box + NONCE_LEN + out, &fin) != 1 ||
        EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, box + NONCE_LEN + len) != 1)
        goto fail;
    lua_pushlstring(L, (const char *)box, NONCE_LEN + len + TAG_LEN);
    ok = 1;
fail:
    EVP_CIPHER_CTX_free(cx);
    free(box);
    if (!ok) return luaL_error(L, "seal: libcrypto failed (out of memory?)");
    return 1;
}

/* unseal(key, box [, aad]) -> plaintext, or nil, message when the box does not
 * authenticate (tampered, truncated, other key, other aad). */
static int l_unseal(lua_State *L)
{
    const unsigned char *key = check_key(L, 1);
    size_t len, aad_len = 0;
    const unsigned char *box = (const unsigned char *)luaL_checklstring(L, 2, &len);
    const unsigned char *aad = (const unsigned char *)luaL_optlstring(L, 3, "", &aad_len);
    if (len < NONCE_LEN + TAG_LEN) {
        lua_pushnil(L);
        lua_pushliteral(L, "sealed data is too short");
        return 2;
    }
    if (len > (size_t)INT32_MAX) return luaL_argerror(L, 2, "sealed data too large");

    size_t ct_len = len - NONCE_LEN - TAG_LEN;
    EVP_CIPHER_CTX *cx = NULL;
    unsigned char *pt = malloc(ct_len + 1); /* + 1: malloc(0) may return NULL */
    unsigned char tag[TAG_LEN];
    int out = 0, fin = 0, status = -1; /* -1 libcrypto failure, 0 not authentic, 1 ok */
    if (!pt) goto fail;
    memcpy(tag, box + NONCE_LEN + ct_len, TAG_LEN);
    cx = EVP_CIPHER_CTX_new();
    if (!cx) goto fail;
    if (EVP_DecryptInit_ex(cx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) != 1 ||
        EVP_DecryptInit_ex(cx, NULL, NULL, key, box) != 1)
        goto fail;
    if (aad_len > 0 && EVP_DecryptUpdate(cx, NULL, &out, aad, (int)aad_len) != 1) goto fail;
    if (EVP_DecryptUpdate(cx, pt, &out, box + NONCE_LEN, (int)ct_len) != 1 ||
        EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag) != 1)
        goto fail;
    /* The tag is verified here; nothing decrypted is returned unless it matches. */
    status = EVP_DecryptFinal_ex(cx, pt + out, &fin) == 1 ? 1 : 0;
    if (status == 1) lua_pushlstring(L, (const char *)pt, ct_len);
fail:
    EVP_CIPHER_CTX_free(cx);
    if (pt) {
        OPENSSL_cleanse(pt, ct_len + 1);
        free(pt);
    }
    if (status < 0) return luaL_error(L, "unseal: libcrypto failed (out of memory?)");
    if (status == 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "sealed data failed authentication");
        return 2;
    }
    return 1;
}

/* sha256(data) -> 32-byte digest (binary string) */
static int l_sha256(lua_State *L)
{
    size_t len;
    const char *data = luaL_checklstring(L, 1, &len);
    unsigned char md[SHA256_LEN];
    unsigned int md_len = 0;
    if (EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) != 1 || md_len != SHA256_LEN)
        return luaL_error(L, "sha256: libcrypto failed");
    lua_pushlstring(L, (const char *)md, SHA256_LEN);
    return 1;
}

/* random_bytes(n) -> n bytes from OpenSSL's CSPRNG (1 <= n <= 1024) */
static int l_random_bytes(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    luaL_argcheck(L, n > 0 && n <= MAX_RANDOM, 1, "1..1024 bytes");
    unsigned char buf[MAX_RANDOM];
    if (RAND_bytes(buf, (int)n) != 1)
        return luaL_error(L, "random_bytes: libcrypto's generator failed");
    lua_pushlstring(L, (const char *)buf, (size_t)n);
    OPENSSL_cleanse(buf, (size_t)n);
    return 1;
}

void mm_seal_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"seal", l_seal},     {"unseal", l_unseal},
        {"sha256", l_sha256}, {"random_bytes", l_random_bytes},
        {NULL, NULL},
    };
    luaL_register(L, NULL, fns);
}
