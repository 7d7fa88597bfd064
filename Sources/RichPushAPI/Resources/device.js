// A browser device for RichPush (docs/devices.md#a-browser-device). It is its own push client,
// as the simulated web devices are: the browser's PushManager would go to its vendor's push
// service, so this page subscribes at the push service named by ?push= (richpush webpush-sim),
// restricted to ?key= (the VAPID public key) when given, and receives over its WebSocket.
// Steps are logged in #log as <li data-step="…">, with the simulated devices' event names.
// The password stays in this page's memory and goes only to this origin, as Basic auth.
'use strict';

(() => {
  const params = new URLSearchParams(location.search);
  // The server let the page connect to this origin only (its Content-Security-Policy).
  const pushOrigin = (() => { try { return new URL(params.get('push')).origin; } catch { return null; } })();
  const serverKey = params.get('key');
  const $ = (id) => document.getElementById(id);
  const utf8 = (text) => new TextEncoder().encode(text);

  let authorization = null;
  let device = null; // {keys, publicKey, auth, subscription, installation}
  let socket = null;
  const shownTags = new Set();

  // MARK: - The step log

  function log(step, detail = '', data = {}) {
    const item = document.createElement('li');
    item.dataset.step = step;
    for (const [name, value] of Object.entries(data)) item.dataset[name] = String(value);
    item.textContent = `${new Date().toISOString().slice(11, 23)} ${step}${detail ? ': ' + detail : ''}`;
    $('log').append(item);
  }

  function setState(state, text) {
    $('state').dataset.state = state;
    $('state').textContent = text;
  }

  function fail(detail) {
    log('failed', detail);
    setState('failed', 'failed');
  }

  // MARK: - Encodings

  function base64URL(bytes) {
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function fromBase64(text) {
    const standard = text.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
    return Uint8Array.from(binary, (character) => character.charCodeAt(0));
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
    let offset = 0;
    for (const part of parts) { out.set(part, offset); offset += part.length; }
    return out;
  }

  async function sha256Hex(bytes) {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
  }

  // MARK: - RFC 8291 (aes128gcm, RFC 8188), with WebCrypto

  async function hkdf(salt, ikm, info, length) {
    const key = await crypto.subtle.importKey('raw', ikm, 'HKDF', false, ['deriveBits']);
    return new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info }, key, length * 8));
  }

  async function decrypt(body) {
    // Header (RFC 8188 §2.1): salt (16) | rs (4) | idlen (1) | keyid (idlen: the sender's key).
    if (body.length < 21) throw new Error('shorter than an aes128gcm header');
    const salt = body.subarray(0, 16);
    const rs = new DataView(body.buffer, body.byteOffset + 16, 4).getUint32(0);
    const idlen = body[20];
    if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not a P-256 public key (RFC 8291 §4)`);
    const senderKey = body.subarray(21, 86);
    const ciphertext = body.subarray(86);
    if (ciphertext.length < 17 || ciphertext.length > rs) throw new Error('not exactly one record (RFC 8291 §4)');
    const sender = await crypto.subtle.importKey('raw', senderKey, { name: 'ECDH', namedCurve: 'P-256' }, false, []);
    const ecdhSecret = new Uint8Array(await crypto.subtle.deriveBits({ name: 'ECDH', public: sender }, device.keys.privateKey, 256));
    // RFC 8291 §3.4: key_info = "WebPush: info" 0x00 ua_public as_public; IKM from the auth secret.
    const keyInfo = concat(utf8('WebPush: info\0'), device.publicKey, senderKey);
    const ikm = await hkdf(device.auth, ecdhSecret, keyInfo, 32);
    const cek = await hkdf(salt, ikm, utf8('Content-Encoding: aes128gcm\0'), 16);
    const nonce = await hkdf(salt, ikm, utf8('Content-Encoding: nonce\0'), 12);
    const key = await crypto.subtle.importKey('raw', cek, 'AES-GCM', false, ['decrypt']);
    const padded = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce, tagLength: 128 }, key, ciphertext));
    // RFC 8188 §2: data, then the delimiter 0x02 (the last record), then zero padding.
    let end = padded.length;
    while (end > 0 && padded[end - 1] === 0) end -= 1;
    if (end === 0 || padded[end - 1] !== 2) throw new Error('no last-record delimiter (RFC 8188 §2)');
    return padded.subarray(0, end - 1);
  }

  // MARK: - RichPush and the push service

  async function api(method, path, json) {
    const headers = { Authorization: authorization };
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(path, {
      method, headers, body: json === undefined ? undefined : JSON.stringify(json), cache: 'no-store', credentials: 'omit',
    });
    if (response.status === 401) throw new Error('RichPush refused the user name or password (401)');
    return response;
  }

  async function subscribe() {
    // As PushManager.subscribe() does: the keys first (the private key never leaves WebCrypto).
    const keys = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
    const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey));
    const auth = crypto.getRandomValues(new Uint8Array(16));
    const response = await fetch(`${pushOrigin}/subscribe`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, credentials: 'omit',
      body: JSON.stringify(serverKey ? { applicationServerKey: serverKey } : {}),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.status !== 201 || !answer.endpoint || !answer.webSocket) {
      throw new Error(`the push service answered ${response.status} ${answer.message || ''}`);
    }
    log('subscribed', answer.endpoint, { endpoint: answer.endpoint });
    return { keys, publicKey, auth, subscription: answer };
  }

  async function register(subscribed) {
    const endpoint = subscribed.subscription.endpoint;
    const first = await api('POST', `/api/register?handle=${encodeURIComponent(endpoint)}`);
    if (first.status !== 200) throw new Error(`registration answered ${first.status}`);
    const installation = await first.json();
    const second = await api('PUT', `/api/register/${encodeURIComponent(installation)}`, {
      Platform: 'webpush',
      Subscription: { endpoint, expirationTime: null, keys: { p256dh: base64URL(subscribed.publicKey), auth: base64URL(subscribed.auth) } },
    });
    if (second.status !== 200) throw new Error(`registration answered ${second.status} ${(await second.text()).slice(0, 200)}`);
    log('registered', `installation ${installation}`, { installation });
    return installation;
  }

  // The push service ended the subscription (its `expired` frame): what a service worker's
  // pushsubscriptionchange does. A new subscription with new keys, registered under the same
  // installation; tried again with back-off while the push service or RichPush refuses.
  async function resubscribe(delay = 100) {
    if (!device) return;
    try {
      const subscribed = await subscribe();
      const endpoint = subscribed.subscription.endpoint;
      const answer = await api('PUT', `/api/register/${encodeURIComponent(device.installation)}`, {
        Platform: 'webpush',
        Subscription: { endpoint, expirationTime: null, keys: { p256dh: base64URL(subscribed.publicKey), auth: base64URL(subscribed.auth) } },
      });
      if (answer.status !== 200) throw new Error(`registration answered ${answer.status} ${(await answer.text()).slice(0, 200)}`);
      if (!device) return;
      device = { ...subscribed, installation: device.installation };
      log('resubscribed', `the push service ended the subscription; registered ${endpoint}`, { endpoint, installation: device.installation });
      connect();
    } catch (error) {
      log('resubscribe-failed', `${error.message || error}; trying again in ${delay} ms`);
      setTimeout(() => resubscribe(Math.min(delay * 2, 5000)), delay);
    }
  }

  function connect(delay = 100) {
    let ended = false;
    socket = new WebSocket(device.subscription.webSocket);
    socket.onmessage = (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch { return log('passed-over', 'a frame that is not JSON'); }
      if (frame.type === 'hello') {
        delay = 100;
        log('connected', 'the push service delivers to this page');
        setState('listening', 'listening');
      } else if (frame.type === 'message' && frame.message) {
        receive(frame.message).catch((error) => fail(String(error.message || error)));
      } else if (frame.type === 'expired') {
        ended = true;
      }
    };
    socket.onclose = () => {
      if (!device) return;
      if (ended) {
        setState('registering', 'subscribing again');
        resubscribe();
        return;
      }
      setState('connecting', 'connecting again');
      log('disconnected', `connecting again in ${delay} ms`);
      setTimeout(() => connect(Math.min(delay * 2, 5000)), delay);
    };
  }

  // MARK: - One push, as the tutorial's app handles it

  async function receive(message) {
    if (!message.body) return fail('a push message without payload: no richId to fetch');
    if (message.contentEncoding !== 'aes128gcm') return fail(`content coding ${message.contentEncoding}, not aes128gcm`);
    let keys;
    try {
      keys = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await decrypt(fromBase64(message.body))));
    } catch (error) {
      return fail(`cannot decrypt the push message: ${error.message || error}`);
    }
    const richId = String(keys.richId ?? '');
    const richType = String(keys.richType ?? '');
    if (shownTags.has(richId)) return log('collapsed', `a notification with tag ${richId} is already shown`, { richId });
    log('received', `richId ${richId}, ${richType}: ${keys.richMessage ?? ''}`, { richId, richType });
    if (!/^[0-9]{1,18}$/.test(richId)) return fail('richId is not an integer');
    if (!['img', 'url', 'sound', 'text'].includes(richType)) return fail(`unsupported rich type '${richType}'`);
    const response = await api('GET', `/api/notifications/${richId}?installation=${encodeURIComponent(device.installation)}`);
    if (response.status !== 200) return fail(`the payload fetch answered HTTP ${response.status}`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const contentType = (response.headers.get('Content-Type') || 'application/octet-stream').split(';')[0].trim();
    log('fetched', `${bytes.length} bytes, ${contentType}`, { richId, bytes: bytes.length, contentType });
    shownTags.add(richId);
    show({ richId, richType, message: String(keys.richMessage ?? ''), bytes, contentType });
  }

  function show(push) {
    $('notification-message').textContent = push.message;
    $('notification').hidden = false;
    $('ok').onclick = () => {
      $('notification').hidden = true;
      log('dismissed', 'OK', { richId: push.richId });
    };
    $('more').onclick = () => {
      $('notification').hidden = true;
      open(push).catch((error) => fail(String(error.message || error)));
    };
    log('displayed', `in-page alert "Notification": ${push.message} [OK] [More]`, { richId: push.richId });
    receipt(push.richId, 'displayed');
  }

  async function open(push) {
    const digest = await sha256Hex(push.bytes);
    $('view').hidden = false;
    $('caption').textContent = `${push.contentType}, ${push.bytes.length} bytes, SHA-256 ${digest}`;
    const image = $('image');
    const text = $('text');
    if (['image/png', 'image/jpeg', 'image/gif', 'image/webp'].includes(push.contentType)) {
      text.hidden = true;
      const loaded = new Promise((resolve, reject) => { image.onload = resolve; image.onerror = () => reject(new Error('the image does not decode')); });
      if (image.src) URL.revokeObjectURL(image.src);
      image.src = URL.createObjectURL(new Blob([push.bytes], { type: push.contentType }));
      image.hidden = false;
      await loaded;
    } else {
      // A URL or text is shown as text, never followed or rendered as markup.
      image.hidden = true;
      text.textContent = new TextDecoder().decode(push.bytes.subarray(0, 4096));
      text.hidden = false;
    }
    log('opened', 'More → image view', { richId: push.richId, sha256: digest, bytes: push.bytes.length });
    receipt(push.richId, 'opened');
  }

  function receipt(richId, kind) {
    api('POST', `/api/notifications/${richId}/receipts`, { kind, installation: device.installation })
      .then((response) => { if (response.status !== 200) log('receipt-refused', `${kind}: HTTP ${response.status}`); })
      .catch((error) => log('receipt-refused', `${kind}: ${error.message || error}`));
  }

  // MARK: - Sign-in and sign-out

  async function signIn(event) {
    event.preventDefault();
    const user = $('user').value;
    const password = $('password').value;
    $('password').value = '';
    const credentials = String.fromCharCode(...utf8(`${user}:${password}`));
    authorization = `Basic ${btoa(credentials)}`;
    $('sign-in-button').disabled = true;
    setState('registering', 'registering');
    try {
      const subscribed = await subscribe();
      device = { ...subscribed, installation: null };
      device.installation = await register(subscribed);
      $('sign-in').hidden = true;
      $('sign-out').hidden = false;
      connect();
    } catch (error) {
      authorization = null;
      $('sign-in-button').disabled = false;
      fail(String(error.message || error));
    }
  }

  // Unregisters from RichPush and unsubscribes at the push service, then forgets the password.
  async function signOut() {
    const leaving = device;
    device = null;
    $('sign-out').hidden = true;
    if (socket) socket.close();
    try {
      const unregistered = await api('DELETE', `/api/register/${encodeURIComponent(leaving.installation)}`);
      const unsubscribed = await fetch(`${pushOrigin}/subscription/${encodeURIComponent(leaving.subscription.subscriptionId)}`,
        { method: 'DELETE', credentials: 'omit' });
      log('signed-out', `unregistered (HTTP ${unregistered.status}), unsubscribed (HTTP ${unsubscribed.status})`,
        { unregistered: unregistered.status, unsubscribed: unsubscribed.status });
    } catch (error) {
      log('failed', `signing out: ${error.message || error}`);
    }
    authorization = null;
    setState('signed-out', 'signed out');
  }

  function start() {
    if (!window.isSecureContext || !crypto.subtle) {
      $('sign-in-button').disabled = true;
      return fail('WebCrypto needs a secure context: open this page over https or on localhost');
    }
    if (!pushOrigin) {
      $('sign-in-button').disabled = true;
      return fail('no push service: open this page as /device?push=https://host:port[&key=<VAPID public key>]');
    }
    $('push-origin').textContent = pushOrigin;
    $('restriction').textContent = serverKey ? 'subscriptions restricted to the application server key' : 'unrestricted';
    $('sign-in').addEventListener('submit', signIn);
    $('sign-out').addEventListener('click', () => { signOut(); });
    log('ready', 'sign in to register this browser');
  }

  start();
})();
