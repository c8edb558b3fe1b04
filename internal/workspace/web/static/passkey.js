// Zero workspace: passkeys. A change that needs your passkey is confirmed
// for exactly that request: the page asks the workspace for a challenge
// made from the request (its method, path and body), the authenticator
// signs it, and the request carries the assertion. Without a passkey
// nothing here runs.
"use strict";
(function () {
  function fromB64url(s) {
    var b = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
    var out = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
    return out.buffer;
  }
  function toB64url(buf) {
    var bytes = new Uint8Array(buf), s = "";
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  // publicKey turns the workspace's options (base64url fields) into what
  // navigator.credentials takes (ArrayBuffers).
  function publicKey(options) {
    var pk = options.publicKey;
    pk.challenge = fromB64url(pk.challenge);
    if (pk.user) pk.user.id = fromB64url(pk.user.id);
    (pk.allowCredentials || []).concat(pk.excludeCredentials || []).forEach(function (c) { c.id = fromB64url(c.id); });
    return pk;
  }
  // credentialJSON is a PublicKeyCredential as the workspace reads it.
  function credentialJSON(cred) {
    var r = cred.response;
    var out = { id: cred.id, rawId: toB64url(cred.rawId), type: cred.type, response: { clientDataJSON: toB64url(r.clientDataJSON) },
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {} };
    if (r.attestationObject) {
      out.response.attestationObject = toB64url(r.attestationObject);
      out.response.transports = r.getTransports ? r.getTransports() : [];
    }
    if (r.authenticatorData) {
      out.response.authenticatorData = toB64url(r.authenticatorData);
      out.response.signature = toB64url(r.signature);
      if (r.userHandle) out.response.userHandle = toB64url(r.userHandle);
    }
    return out;
  }
  function csrfToken() {
    var i = document.querySelector("input[name=csrf_token]");
    return i ? i.value : "";
  }
  function send(method, path, text, assertion) {
    var headers = { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() };
    if (assertion) headers["Zero-Passkey"] = header(assertion);
    return fetch(path, { method: method, mode: "same-origin", credentials: "same-origin", headers: headers, body: text }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (data) {
        var e = (data && data.error) || {};
        return { ok: res.ok, status: res.status, data: data, code: e.code || "", message: e.message || "" };
      });
    });
  }
  function header(assertion) {
    return toB64url(new TextEncoder().encode(assertion));
  }
  // confirm asks for a challenge for one request and the passkey's
  // assertion of it. It resolves to null when the request needs none, or
  // to the assertion to send with it; say, if given, shows the words.
  function confirm(method, path, kind, body, say) {
    var req = { method: method, path: path };
    req[kind] = body;
    return send("POST", "/api/passkeys/challenge", JSON.stringify(req)).then(function (res) {
      if (!res.ok) throw new Error(res.message || "the passkey challenge failed (HTTP " + res.status + ")");
      if (!res.data.needed) return null;
      if (say) say("Touch your passkey to confirm: " + res.data.words);
      return navigator.credentials.get({ publicKey: publicKey(res.data.options) }).then(function (cred) {
        return JSON.stringify({ nonce: res.data.nonce, credential: credentialJSON(cred) });
      });
    });
  }
  // request sends a JSON request, with an assertion when the workspace
  // answers that it needs one. It resolves to {ok, status, data, code,
  // message}, a failure to reach the workspace or to confirm included.
  function request(method, path, body, say) {
    var text = body === undefined ? undefined : JSON.stringify(body);
    return send(method, path, text).then(function (res) {
      if (res.status !== 403 || res.code !== "passkey_required") return res;
      return confirm(method, path, "body", text === undefined ? "" : text, say).then(function (assertion) {
        return send(method, path, text, assertion);
      }, function (err) {
        return { ok: false, status: 0, data: null, code: "passkey", message: "Your passkey did not confirm it: " + err.message };
      });
    }, function () {
      return { ok: false, status: 0, data: null, code: "network", message: "The workspace did not answer: is zero serve running?" };
    });
  }
  window.zeroPasskey = { confirm: confirm, request: request };

  function problem(form, text) {
    var p = form.querySelector(".passkey-problem");
    if (!p) {
      p = document.createElement("p");
      p.className = "error passkey-problem";
      p.setAttribute("role", "alert");
      form.appendChild(p);
    }
    p.textContent = text;
  }
  function hidden(form, name, value) {
    var i = document.createElement("input");
    i.type = "hidden";
    i.name = name;
    i.value = value;
    form.appendChild(i);
  }

  // A form posted by a person with a passkey asks first whether its
  // change needs the passkey, and carries the assertion when it does.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (document.body.dataset.passkeys !== "on" || e.defaultPrevented || form.method.toLowerCase() !== "post" || form.dataset.passkeyDone) return;
    e.preventDefault();
    var submitter = e.submitter || null;
    var values = new URLSearchParams(new FormData(form, submitter)).toString();
    var action = submitter && submitter.hasAttribute("formaction") ? submitter.formAction : form.action;
    var url = new URL(action, location.href);
    confirm("POST", url.pathname + url.search, "form", values, function (words) { problem(form, words); }).then(function (assertion) {
      if (assertion) hidden(form, "passkey_assertion", assertion);
      form.dataset.passkeyDone = "1";
      form.requestSubmit(submitter); // again, as the person sent it, with the assertion
    }, function (err) {
      problem(form, "Not sent: your passkey did not confirm it (" + err.message + ").");
    });
  });

  // The Security page adds a passkey.
  document.addEventListener("DOMContentLoaded", function () {
    var add = document.getElementById("add-passkey");
    if (!add) return;
    var shown = document.getElementById("passkey-problem");
    function say(text) { shown.textContent = text; shown.hidden = !text; }
    add.addEventListener("click", function () {
      say("");
      send("POST", "/api/passkeys/registrations", "{}").then(function (res) {
        if (!res.ok) throw new Error(res.message);
        return navigator.credentials.create({ publicKey: publicKey(res.data.options) }).then(function (cred) {
          var name = document.getElementById("new-passkey-name").value;
          return request("POST", "/api/passkeys", { nonce: res.data.nonce, name: name, credential: credentialJSON(cred) }, say);
        });
      }).then(function (res) {
        if (!res.ok) throw new Error(res.message);
        location.reload();
      }).catch(function (err) {
        say("No passkey was added: " + err.message);
      });
    });
  });
})();
