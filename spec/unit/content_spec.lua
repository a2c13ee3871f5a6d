-- moonmcp.content (content blocks, resource contents) and moonmcp.base64.
local content = require "moonmcp.content"
local base64 = require "moonmcp.base64"

describe("moonmcp.base64", function()
  it("encodes the RFC 4648 test vectors", function()
    local got = {}
    for i, s in ipairs { "", "f", "fo", "foo", "foob", "fooba", "foobar" } do
      got[i] = base64.encode(s)
    end
    assert.same({ "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" }, got)
  end)

  it("decodes what it encodes, for every byte value", function()
    local all = {}
    for i = 0, 255 do
      all[#all + 1] = string.char(i)
    end
    local bytes = table.concat(all)
    for cut = 0, 2 do
      local s = bytes:sub(1, #bytes - cut)
      assert.equal(s, base64.decode(base64.encode(s)))
    end
  end)

  it("round-trips a large input", function()
    local s = ("\0\1\2\3\255moon"):rep(50000)
    assert.equal(s, base64.decode(base64.encode(s)))
  end)

  it("rejects characters outside the alphabet", function()
    local v, err = base64.decode("Zm9v!A==")
    assert.is_nil(v)
    assert.matches("invalid base64 character", err)
  end)

  it("rejects a length that is not a multiple of 4", function()
    assert.is_nil((base64.decode("Zm9")))
  end)

  it("rejects misplaced padding", function()
    assert.is_nil((base64.decode("Z===")))
    assert.is_nil((base64.decode("Zm=v")))
  end)

  it("rejects non-canonical padding bits", function()
    assert.is_nil((base64.decode("Zh==")))
  end)

  it("rejects whitespace", function()
    assert.is_nil((base64.decode("Zm9v\nYmFy")))
  end)

  it("encodes base64url without padding", function()
    assert.equal("-_8", base64.encode_url("\251\255"))
    assert.equal("\251\255", base64.decode_url("-_8"))
  end)

  it("rejects the standard alphabet in base64url", function()
    assert.is_nil((base64.decode_url("+/8")))
  end)

  it("raises on a non-string argument", function()
    assert.has_error(function() base64.encode(1) end)
    assert.has_error(function() base64.decode({}) end)
  end)
end)

describe("moonmcp.content", function()
  local PNG = base64.encode("\137PNG")

  it("builds a text block, with annotations", function()
    assert.same({ type = "text", text = "hi", annotations = { priority = 1 } }, content.text("hi", { priority = 1 }))
  end)

  it("builds image and audio blocks from base64", function()
    assert.same({ type = "image", data = PNG, mimeType = "image/png" }, content.image(PNG, "image/png"))
    assert.same({ type = "audio", data = PNG, mimeType = "audio/wav" }, content.audio(PNG, "audio/wav"))
  end)

  it("base64-encodes raw bytes for image_bytes and audio_bytes", function()
    assert.equal(PNG, content.image_bytes("\137PNG", "image/png").data)
    assert.equal(PNG, content.audio_bytes("\137PNG", "audio/wav").data)
  end)

  it("refuses image data that is not base64, naming the function", function()
    assert.has_error(function() content.image("\137PNG", "image/png") end,
      "moonmcp.content.image: data must be a base64 string (use image_bytes for raw bytes)")
  end)

  it("refuses an image without a MIME type", function()
    assert.has_error(function() content.image(PNG) end)
  end)

  it("builds an embedded text resource", function()
    assert.same({ type = "resource", resource = { uri = "a://b", mimeType = "text/plain", text = "x" } },
      content.resource { uri = "a://b", mimeType = "text/plain", text = "x" })
  end)

  it("builds an embedded blob resource from raw bytes", function()
    assert.same({ type = "resource", resource = { uri = "a://b", blob = PNG } },
      content.resource { uri = "a://b", bytes = "\137PNG" })
  end)

  it("refuses a resource with both text and blob", function()
    assert.has_error(function() content.resource { uri = "a://b", text = "x", blob = PNG } end)
  end)

  it("refuses a resource without a uri", function()
    assert.has_error(function() content.resource { text = "x" } end)
  end)

  it("builds a resource link, named by its URI by default", function()
    assert.same({ type = "resource_link", uri = "a://b", name = "a://b", mimeType = "text/plain" },
      content.resource_link { uri = "a://b", mimeType = "text/plain" })
  end)

  it("builds resource contents for read results", function()
    assert.same({ uri = "a://b", blob = PNG }, content.contents { uri = "a://b", blob = PNG })
  end)

  it("checks well-formed blocks", function()
    assert.is_true(content.check(content.text("x")))
    assert.is_true(content.check(content.resource_link { uri = "a://b" }))
  end)

  it("checks and names what is wrong with a malformed block", function()
    local ok, err = content.check { type = "video", data = PNG }
    assert.is_nil(ok)
    assert.matches("unknown content type video", err)
    assert.is_nil((content.check { type = "image", data = "nope!", mimeType = "image/png" }))
  end)
end)
