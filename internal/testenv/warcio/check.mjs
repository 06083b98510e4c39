// Reads WARC files with warcio.js (webrecorder's reader, not ours) and
// prints one JSON line per record, with the payload's SHA-1 computed here
// to check WARC-Payload-Digest against.
import { WARCParser } from "warcio";
import fs from "node:fs";
import crypto from "node:crypto";

function base32(buf) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const byte of buf) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8) out += "=";
  return out;
}

for (const file of process.argv.slice(2)) {
  const parser = new WARCParser(fs.createReadStream(file));
  for await (const r of parser) {
    const payload = await r.readFully(false);
    const info = r.getResponseInfo();
    console.log(JSON.stringify({
      file,
      version: r.warcHeaders.statusline,
      type: r.warcType,
      id: r.warcHeader("WARC-Record-ID"),
      uri: r.warcTargetURI,
      concurrentTo: r.warcHeader("WARC-Concurrent-To"),
      payloadDigest: r.warcPayloadDigest,
      computedDigest: "sha1:" + base32(crypto.createHash("sha1").update(payload).digest()),
      status: info ? Number(info.status) : 0,
      method: r.httpHeaders ? r.httpHeaders.method || "" : "",
      contentType: info ? info.headers.get("content-type") || "" : "",
      payload: r.warcType === "response" || r.warcType === "warcinfo" ? new TextDecoder().decode(payload) : "",
    }));
  }
}
