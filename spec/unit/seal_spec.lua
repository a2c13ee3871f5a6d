-- Specs for core.seal / core.unseal (AES-256-GCM), core.sha256 and core.random_bytes
-- (core/lseal.c).
local core = require("moonmcp.core")

local KEY = ("k"):rep(32)
local OTHER = ("o"):rep(32)

local function hex(s)
    return (s:gsub(".", function(c)
        return ("%02x"):format(c:byte())
    end))
end

local function flip(s, i)
    return s:sub(1, i - 1) .. string.char(bit.bxor(s:byte(i), 1)) .. s:sub(i + 1)
end

describe("core.seal / core.unseal", function()
    it("round-trips, with and without additional data, empty plaintext included", function()
        assert.equal("hello", core.unseal(KEY, core.seal(KEY, "hello")))
        assert.equal("hello", core.unseal(KEY, core.seal(KEY, "hello", "aad"), "aad"))
        assert.equal("", core.unseal(KEY, core.seal(KEY, "")))
        local big = ("x"):rep(100000)
        assert.equal(big, core.unseal(KEY, core.seal(KEY, big)))
    end)

    it("is nonce || ciphertext || tag, with a fresh nonce every time", function()
        local a, b = core.seal(KEY, "same"), core.seal(KEY, "same")
        assert.equal(12 + 4 + 16, #a)
        assert.are_not.equal(a, b)
    end)

    it("refuses any flipped byte: nonce, ciphertext or tag", function()
        local box = core.seal(KEY, "secret payload")
        for _, i in ipairs({ 1, 12, 13, 20, #box - 15, #box }) do
            local plain, err = core.unseal(KEY, flip(box, i))
            assert.is_nil(plain)
            assert.matches("authentication", err)
        end
    end)

    it("refuses another key, other additional data, truncation", function()
        local box = core.seal(KEY, "x", "aad")
        assert.is_nil(core.unseal(OTHER, box, "aad"))
        assert.is_nil(core.unseal(KEY, box, "other"))
        assert.is_nil(core.unseal(KEY, box))
        assert.is_nil(core.unseal(KEY, box:sub(1, -2), "aad"))
        local plain, err = core.unseal(KEY, "short")
        assert.is_nil(plain)
        assert.matches("too short", err)
    end)

    it("raises on misuse: key length, argument types", function()
        assert.has_error(function() core.seal("short", "x") end)
        assert.has_error(function() core.unseal(("k"):rep(33), ("b"):rep(40)) end)
        assert.has_error(function() core.seal(KEY, {}) end)
    end)
end)

describe("core.sha256", function()
    it("matches the FIPS 180-2 test vectors", function()
        assert.equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hex(core.sha256("")))
        assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex(core.sha256("abc")))
    end)
end)

describe("core.random_bytes", function()
    it("returns n bytes, different each time, and checks n", function()
        assert.equal(32, #core.random_bytes(32))
        assert.are_not.equal(core.random_bytes(16), core.random_bytes(16))
        assert.has_error(function() core.random_bytes(0) end)
        assert.has_error(function() core.random_bytes(1025) end)
    end)
end)
