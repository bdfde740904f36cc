// The deposit form's file area, made better (templates/pages/deposit/_files.html works without this file; the
// behaviour is described in docs/researchers/depositing.md, the protocols in docs/api/deposits.md):
// - files chosen or dropped are uploaded at once, each with a labelled progress bar and its own message (an error,
//   a pause, then the MD5 and SHA-256 the server computed); every change is also announced in a polite live region;
// - a file below the multipart size goes in one PUT to the deposition's bucket, with its SHA-256 (computed here) in
//   Content-Digest, so the server refuses bytes that changed on the way;
// - a larger file goes in parts (the bucket's multipart upload), each part with its own SHA-256: when the
//   connection drops, the upload pauses, and it goes on by itself when the connection is back (or at "Resume"), asking the server which parts it holds and sending only the missing ones;
// - a file can be replaced (its name and place kept), moved and deleted without leaving the page;
// after each change the list is reloaded from the server's own rendering (/deposit/<id>/files), so it shows exactly
// what a page load would. The session cookie authenticates; every write carries the CSRF token in X-CSRFToken.
(function () {
  "use strict";
  const PARALLEL = 3;
  const WAITS = [1, 2, 4, 8, 15, 30]; // seconds between automatic tries while the connection is down

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function base64(buffer) {
    return btoa(String.fromCharCode.apply(null, new Uint8Array(buffer)));
  }

  // SHA-256 of a Blob, or null where the browser offers no WebCrypto (a page not served over HTTPS).
  async function sha256(blob) {
    if (!window.crypto || !window.crypto.subtle) {
      return null;
    }
    return base64(await window.crypto.subtle.digest("SHA-256", await blob.arrayBuffer()));
  }

  function setup(area) {
    const csrf = area.dataset.csrf;
    const status = area.querySelector("[data-files-status]");
    const form = area.querySelector("[data-upload-form]");
    const announcer = document.createElement("div");
    announcer.className = "visually-hidden";
    announcer.setAttribute("aria-live", "polite");
    announcer.setAttribute("data-files-announce", "");
    area.append(announcer);

    function say(text, kind) {
      status.textContent = text;
      status.className = "files-status notice " + (kind || "success");
    }

    function announce(text) {
      announcer.textContent = text;
    }

    function messageOf(xhrText, fallback) {
      try {
        const body = JSON.parse(xhrText);
        const details = (body.errors || []).map(function (e) { return e.message; })
          .filter(function (m) { return m && body.message.indexOf(m) < 0; });
        return [body.message].concat(details).join(" ");
      } catch (e) {
        return fallback;
      }
    }

    async function refresh() {
      const answer = await fetch(area.dataset.refresh, {credentials: "same-origin", headers: {Accept: "text/html"}});
      if (!answer.ok) {
        throw new Error("The list of files could not be reloaded (" + answer.status + "): reload the page.");
      }
      const page = new DOMParser().parseFromString(await answer.text(), "text/html");
      const fresh = page.querySelector("[data-files-body]");
      if (fresh) {
        area.querySelector("[data-files-body]").replaceWith(document.importNode(fresh, true));
      }
      const room = page.querySelector("[data-files]");
      if (room) {
        area.dataset.room = room.dataset.room || "";
      }
    }

    function keys() {
      return Array.from(area.querySelectorAll("[data-files-list] > li")).map(function (li) { return li.dataset.key; });
    }

    let rows = 0;

    // One file's line under the drop zone: its name as the label of its progress bar, the percentage, and a
    // message (what went wrong and what to do, or the checksums once stored) with the buttons that apply.
    function progressRow(file, what) {
      rows += 1;
      const li = document.createElement("li");
      const id = "upload-bar-" + rows;
      const name = document.createElement("label");
      name.className = "upload-name";
      name.htmlFor = id;
      name.textContent = (what ? what + " " : "") + file.name;
      const bar = document.createElement("progress");
      bar.id = id;
      bar.max = 100;
      bar.value = 0;
      const pct = document.createElement("span");
      pct.className = "upload-pct";
      pct.textContent = "0%";
      const message = document.createElement("div");
      message.className = "upload-message";
      message.id = id + "-message";
      bar.setAttribute("aria-describedby", message.id);
      li.append(name, bar, pct, message);
      form.querySelector("[data-progress]").append(li);
      function tell(text, kind, buttons) {
        li.className = kind || "";
        const line = document.createElement("span");
        line.textContent = text;
        message.replaceChildren(line);
        (buttons || []).forEach(function (b) { message.append(" ", b); });
      }
      return {
        li: li,
        show: function (done) {
          const value = Math.floor(done * 100);
          bar.value = value;
          pct.textContent = value + "%";
        },
        tell: tell,
        fail: function (text, buttons) {
          pct.textContent = "not uploaded";
          tell(text, "failed", buttons);
          announce(file.name + " was not uploaded: " + text);
        },
        stored: function (obj, checked) {
          const sums = obj.checksums || {md5: (obj.checksum || "").replace(/^md5:/, "")};
          const facts = document.createElement("dl");
          facts.className = "file-facts upload-sums";
          [["MD5", sums.md5], ["SHA-256", sums.sha256]].forEach(function (pair) {
            if (pair[1]) {
              const dt = document.createElement("dt");
              dt.textContent = pair[0];
              const dd = document.createElement("dd");
              const code = document.createElement("code");
              code.textContent = pair[1];
              dd.append(code);
              facts.append(dt, dd);
            }
          });
          tell({whole: "Stored; the server checked the bytes against this file's SHA-256.",
            parts: "Stored; the server checked each part against its SHA-256 computed here."}[checked] || "Stored.",
            "done");
          message.append(facts);
          announce(file.name + " uploaded.");
        },
      };
    }

    function button(text, label, onClick) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "secondary";
      b.textContent = text;
      b.setAttribute("aria-label", label);
      b.addEventListener("click", onClick);
      return b;
    }

    function objectUrl(name) {
      return area.dataset.bucket + "/" + encodeURIComponent(name);
    }

    // One request with upload progress (fetch reports none); resolves with the answer whatever its status, rejects
    // (without a status) when no answer came: a dropped connection.
    function request(method, url, body, onProgress, headers) {
      return new Promise(function (resolve, reject) {
        const xhr = new XMLHttpRequest();
        xhr.open(method, url);
        xhr.setRequestHeader("X-CSRFToken", csrf);
        xhr.setRequestHeader("Accept", "application/json");
        if (body instanceof Blob) {
          xhr.setRequestHeader("Content-Type", "application/octet-stream");
        }
        Object.keys(headers || {}).forEach(function (h) { xhr.setRequestHeader(h, headers[h]); });
        if (onProgress) {
          xhr.upload.addEventListener("progress", function (event) {
            if (event.lengthComputable) {
              onProgress(event.loaded);
            }
          });
        }
        xhr.addEventListener("load", function () { resolve({status: xhr.status, text: xhr.responseText}); });
        xhr.addEventListener("error", function () { reject(new Error("The connection failed.")); });
        xhr.addEventListener("abort", function () { reject(new Error("The upload was stopped.")); });
        xhr.send(body === undefined ? null : body);
      });
    }

    async function ok(answer) {
      if (answer.status < 200 || answer.status >= 300) {
        const error = new Error(messageOf(answer.text, "The server refused it (" + answer.status + ")."));
        error.status = answer.status;
        throw error;
      }
      return answer.text ? JSON.parse(answer.text) : null;
    }

    // A refusal (a full quota, a taken name, a published deposition, an expired upload) stays one; a dropped
    // connection, a server error or a rate limit is worth another try.
    function transient(error) {
      return !error.status || error.status >= 500 || error.status === 408 || error.status === 429;
    }

    // A file in one PUT to the bucket, the way most files go.
    async function sendWhole(file, key, row) {
      const digest = await sha256(file);
      // 100% only once the server has stored it (the last byte sent is not yet a file).
      const obj = await ok(await request("PUT", objectUrl(key), file, function (sent) {
        row.show(Math.min(sent / Math.max(file.size, 1), 0.99));
      }, digest ? {"Content-Digest": "sha-256=:" + digest + ":"} : {}));
      return {obj: obj, checked: digest ? "whole" : ""};
    }

    // A large file in parts (the bucket's multipart upload), several at once. An upload cut short resumes where
    // it stopped: in this page from the File still held, after a reload when the same file is chosen again (this
    // browser remembers which upload holds that file: its name, size and date).
    function memoryKey(file, key) {
      return "upload:" + area.dataset.bucket + ":" + key.normalize("NFC") + ":" + file.size + ":" + file.lastModified;
    }

    function partSizeFor(size) {
      const wanted = Number(area.dataset.partSize) || 16 * 1024 * 1024;
      return Math.max(wanted, Math.ceil(size / 9000)); // the bucket takes at most 10,000 parts
    }

    async function openUpload(file, key) {
      const url = objectUrl(key);
      const remembered = window.localStorage.getItem(memoryKey(file, key));
      if (remembered) {
        const listing = await request("GET", url + "?uploadId=" + encodeURIComponent(remembered));
        if (listing.status === 200) {
          return JSON.parse(listing.text); // its parts received and those missing
        }
        if (listing.status !== 404) {
          await ok(listing); // a server error is worth another try; a 404 is an upload gone (expired, cancelled)
        }
        window.localStorage.removeItem(memoryKey(file, key));
      }
      // An upload of this name left by another file, or in another browser, cannot be taken up: its bytes may
      // differ. It is cancelled, or it would hold up publishing.
      for (const stale of await unfinished()) {
        if (stale.key === key.normalize("NFC")) {
          await ok(await request("DELETE", url + "?uploadId=" + encodeURIComponent(stale.id)));
        }
      }
      const upload = await ok(await request("POST", url + "?uploads&size=" + file.size + "&partSize=" +
        partSizeFor(file.size)));
      window.localStorage.setItem(memoryKey(file, key), upload.id);
      const all = [];
      for (let n = 0; n <= upload.last_part_number; n += 1) {
        all.push(n);
      }
      return Object.assign(upload, {parts: [], missing: all});
    }

    // One round of a multipart upload: what the server still misses, then the complete. A failed part stops the
    // round (the parts that arrived are kept on the server, and listed as received in the next round).
    async function sendParts(file, key, row, state) {
      if (!state.upload) {
        state.upload = await openUpload(file, key);
      } else {
        const listing = await request("GET", objectUrl(key) + "?uploadId=" + encodeURIComponent(state.upload.id));
        state.upload = Object.assign(state.upload, await ok(listing));
      }
      const upload = state.upload;
      const url = objectUrl(key) + "?uploadId=" + encodeURIComponent(upload.id);
      const size = upload.part_size;
      const sent = {};
      upload.parts.forEach(function (part) { sent[part.part_number] = part.size; });
      const show = function () {
        const total = Object.values(sent).reduce(function (a, b) { return a + b; }, 0);
        row.show(Math.min(total / file.size, 0.99));
      };
      show();
      const queue = upload.missing.slice();
      let failure = null;
      async function worker() {
        while (queue.length && !failure) {
          const n = queue.shift();
          const part = file.slice(n * size, Math.min((n + 1) * size, file.size));
          const digest = await sha256(part);
          try {
            await ok(await request("PUT", url + "&partNumber=" + n, part, function (done) {
              sent[n] = done;
              show();
            }, digest ? {"Content-Digest": "sha-256=:" + digest + ":"} : {}));
            sent[n] = part.size;
            show();
          } catch (error) {
            sent[n] = 0;
            show();
            failure = failure || error;
          }
        }
      }
      const workers = [];
      for (let i = 0; i < PARALLEL; i += 1) {
        workers.push(worker());
      }
      await Promise.all(workers);
      if (failure) {
        throw failure;
      }
      const obj = await ok(await request("POST", url));
      window.localStorage.removeItem(memoryKey(file, key));
      return {obj: obj, checked: window.crypto && window.crypto.subtle ? "parts" : ""};
    }

    // Until the connection is back (the browser's `online` event), a wait that grows, or "Resume"; rejects
    // when the person cancels the upload instead.
    function pause(row, file, round, state, key) {
      return new Promise(function (resolve, reject) {
        const offline = navigator.onLine === false;
        const seconds = WAITS[Math.min(round - 1, WAITS.length - 1)];
        let timer = null;
        function go() {
          window.removeEventListener("online", go);
          clearTimeout(timer);
          row.tell("Resuming…", "paused");
          resolve();
        }
        window.addEventListener("online", go);
        if (!offline) {
          timer = setTimeout(go, seconds * 1000);
        }
        const held = state.upload ? " The parts that arrived are kept." : "";
        const when = offline ? "when the connection is back" : "in " + plural(seconds, "second");
        const resume = button("Resume", "Resume the upload of " + file.name, go);
        const cancel = button("Cancel", "Cancel the upload of " + file.name, function () {
          window.removeEventListener("online", go);
          clearTimeout(timer);
          const gone = state.upload ? request("DELETE", objectUrl(key) + "?uploadId=" +
            encodeURIComponent(state.upload.id)).then(function () {
            window.localStorage.removeItem(memoryKey(file, key));
          }) : Promise.resolve();
          gone.catch(function () { /* it expires on the server by itself */ }).finally(function () {
            const error = new Error("You cancelled it.");
            error.cancelled = true;
            reject(error);
          });
        });
        row.tell("The connection was lost: the upload goes on " + when + "." + held, "paused", [resume, cancel]);
        if (round === 1) {
          announce("The connection was lost while uploading " + file.name + ": the upload goes on " + when + ".");
        }
      });
    }

    // Sends the file, pausing and trying again for as long as the failure is a lost connection.
    async function send(file, key, row) {
      const from = Number(area.dataset.multipartFrom) || 64 * 1024 * 1024;
      const state = {upload: null};
      for (let round = 1; ; round += 1) {
        try {
          return file.size >= from ? await sendParts(file, key, row, state) : await sendWhole(file, key, row);
        } catch (error) {
          if (!transient(error)) {
            throw error;
          }
          await pause(row, file, round, state, key);
        }
      }
    }

    // The user's multipart uploads to this bucket that are still open, each with a button that cancels it.
    async function unfinished() {
      const answer = await request("GET", area.dataset.bucket + "?uploads");
      return answer.status === 200 ? JSON.parse(answer.text).uploads : [];
    }

    async function showUnfinished() {
      const box = form.querySelector("[data-unfinished]");
      const open = (await unfinished()).filter(function (u) { return !u.completed && !active.has(u.key); });
      const list = box.querySelector("ul");
      list.replaceChildren();
      open.forEach(function (u) {
        const li = document.createElement("li");
        const text = document.createElement("span");
        text.textContent = u.key + " (" + u.size + " bytes), open until " + u.expires.slice(0, 10) + " ";
        const cancel = button("Cancel", "Cancel the unfinished upload of " + u.key, function () {
          request("DELETE", objectUrl(u.key) + "?uploadId=" + encodeURIComponent(u.id)).then(ok)
            .then(function () { say("Cancelled the upload of " + u.key + ".", "success"); })
            .catch(function (error) { say(error.message, "error"); })
            .finally(showUnfinished);
        });
        li.append(text, cancel);
        list.append(li);
      });
      box.hidden = open.length === 0;
    }

    // Parallel uploads land in the order they finish: put the new files in the order they were chosen, after
    // those that were there before.
    async function keepChosenOrder(chosen, before) {
      const rows = Array.from(area.querySelectorAll("[data-files-list] > li"));
      const isNew = function (li) { return !before.has(li.dataset.key) && chosen.indexOf(li.dataset.key) >= 0; };
      const added = rows.filter(isNew).sort(function (a, b) {
        return chosen.indexOf(a.dataset.key) - chosen.indexOf(b.dataset.key);
      });
      const wanted = rows.filter(function (li) { return !isNew(li); }).concat(added);
      if (wanted.every(function (li, i) { return li === rows[i]; })) {
        return;
      }
      await api("PUT", area.dataset.api, wanted.map(function (li) { return {id: li.dataset.fileId}; }));
      await refresh();
    }

    const active = new Set(); // the names being uploaded now, from this page

    // Before a byte is sent: a name already there or being uploaded, or a file larger than the room left.
    function refusal(file, key, replace, taken, room) {
      if (!replace && taken.has(key)) {
        return "“" + key + "” is there already: replace that file with this one, or delete it first.";
      }
      if (replace && active.has(key)) {
        return "“" + key + "” is being uploaded: wait until it is done to replace it.";
      }
      const there = replace && area.querySelector('[data-files-list] > li[data-key="' + CSS.escape(key) + '"]');
      if (room !== null && file.size - (there ? Number(there.dataset.size) : 0) > room.left) {
        return "It is too large: it has " + file.size + " bytes, and only " + room.left +
          " bytes are left within this upload's quota. Delete files or ask for more room.";
      }
      return null;
    }

    // Uploads `jobs` ({file, key, replace}); says how it went once the list is reloaded.
    async function upload(jobs) {
      const before = new Set(keys());
      const taken = new Set(before);
      active.forEach(function (k) { taken.add(k); });
      const queue = jobs.slice();
      const chosen = jobs.filter(function (j) { return !j.replace; }).map(function (j) { return j.key; });
      const room = area.dataset.room ? {left: Number(area.dataset.room)} : null;
      const failed = [];
      let done = 0;
      say("Uploading " + plural(queue.length, "file") + "…", "success");
      async function worker() {
        while (queue.length) {
          const job = queue.shift();
          const row = progressRow(job.file, job.replace ? "Replacing " + job.key + " with" : "");
          const refused = refusal(job.file, job.key, job.replace, taken, room);
          if (refused) {
            const again = refused.indexOf("there already") >= 0 ? [button("Replace the file there",
              "Replace the file there named " + job.key, function () {
                row.li.remove();
                upload([{file: job.file, key: job.key, replace: true}]);
              })] : [];
            row.fail(refused, again);
            failed.push("“" + job.file.name + "” was not uploaded: " + refused);
            continue;
          }
          taken.add(job.key);
          active.add(job.key);
          if (room !== null) {
            room.left -= job.file.size;
          }
          try {
            const result = await send(job.file, job.key, row);
            row.show(1);
            row.stored(result.obj, result.checked);
            done += 1;
          } catch (error) {
            row.fail(error.message);
            failed.push("“" + job.file.name + "” was not uploaded: " + error.message);
          } finally {
            active.delete(job.key);
          }
        }
      }
      const workers = [];
      for (let i = 0; i < PARALLEL; i += 1) {
        workers.push(worker());
      }
      await Promise.all(workers);
      try {
        await refresh();
        await keepChosenOrder(chosen, before);
        await showUnfinished();
      } catch (error) {
        failed.push(error.message);
      }
      const verb = jobs.every(function (j) { return j.replace; }) ? "Replaced " : "Uploaded ";
      const summary = done || !failed.length ? verb + plural(done, "file") + "." : "Nothing was uploaded.";
      say(failed.length ? summary + " " + failed.join(" ") : summary, failed.length ? "error" : "success");
    }

    function uploadFiles(files) {
      form.querySelector("[data-progress]").replaceChildren(); // the lines of an earlier batch
      return upload(Array.from(files).map(function (file) {
        return {file: file, key: file.name.normalize("NFC"), replace: false};
      }));
    }

    async function api(method, url, body) {
      const headers = {"X-CSRFToken": csrf, Accept: "application/json"};
      if (body !== undefined) {
        headers["Content-Type"] = "application/json";
      }
      const answer = await fetch(url, {method: method, credentials: "same-origin", headers: headers,
        body: body === undefined ? undefined : JSON.stringify(body)});
      if (!answer.ok) {
        throw new Error(messageOf(await answer.text(), "The server refused it (" + answer.status + ")."));
      }
    }

    async function act(actionForm, submitter) {
      const li = actionForm.closest("li");
      const ids = Array.from(area.querySelectorAll("[data-files-list] > li")).map(function (x) { return x.dataset.fileId; });
      const at = ids.indexOf(li.dataset.fileId);
      if (actionForm.dataset.action === "replace") {
        const input = actionForm.querySelector("input[type=file]");
        if (!input.files.length) {
          say("Choose the file to put in the place of " + li.dataset.key + " first.", "error");
          input.focus();
          return;
        }
        form.querySelector("[data-progress]").replaceChildren();
        await upload([{file: input.files[0], key: li.dataset.key, replace: true}]);
        return;
      }
      if (actionForm.dataset.action === "delete") {
        await api("DELETE", area.dataset.api + "/" + encodeURIComponent(li.dataset.fileId));
        await refresh();
        say("Deleted " + li.dataset.key + ".", "success");
        area.querySelector("#files-heading").focus(); // the button pressed is gone with its file
        return;
      }
      const up = submitter && submitter.value === "up";
      const to = up ? at - 1 : at + 1;
      if (to < 0 || to >= ids.length) {
        return;
      }
      ids.splice(to, 0, ids.splice(at, 1)[0]);
      await api("PUT", area.dataset.api, ids.map(function (id) { return {id: id}; }));
      await refresh();
      say("Moved " + li.dataset.key + (up ? " up." : " down."), "success");
      const moved = area.querySelector('[data-files-list] > li[data-file-id="' + CSS.escape(li.dataset.fileId) + '"]');
      const again = moved && moved.querySelector('button[value="' + (up ? "up" : "down") + '"]:not([disabled])');
      if (again) {
        again.focus(); // keyboard users can keep moving the same file
      }
    }

    area.addEventListener("submit", function (event) {
      const target = event.target;
      if (target.matches("form[data-action]")) {
        event.preventDefault();
        act(target, event.submitter).catch(function (error) { say(error.message, "error"); });
      } else if (target === form) {
        event.preventDefault();
        const input = form.querySelector("input[type=file]");
        if (!input.files.length) {
          say("Choose one or more files to upload first.", "error");
          return;
        }
        uploadFiles(input.files).finally(function () { input.value = ""; });
      }
    });

    if (!form) {
      return;
    }
    form.querySelectorAll(".js-only").forEach(function (el) { el.hidden = false; });
    form.querySelector("[data-upload-button]").hidden = true; // files are uploaded as soon as they are chosen
    showUnfinished().catch(function () { /* the list is a help, not needed to upload */ });
    const input = form.querySelector("input[type=file]");
    input.addEventListener("change", function () {
      if (input.files.length) {
        uploadFiles(input.files).finally(function () { input.value = ""; });
      }
    });
    const zone = form.querySelector("[data-dropzone]");
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function () { zone.classList.remove("dragging"); });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length) {
        uploadFiles(event.dataTransfer.files);
      }
    });
  }

  document.querySelectorAll("[data-files]").forEach(setup);
})();
