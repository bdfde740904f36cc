// The deposit form's file area, made better (templates/pages/deposit/_files.html works without this file):
// - files chosen or dropped are uploaded at once, each PUT straight to the deposition's bucket with a progress bar;
// - moving and deleting a file go through the deposit API, without leaving the page;
// after each change the list is reloaded from the server's own rendering (/deposit/<id>/files), so it shows exactly
// what a page load would. The session cookie authenticates; every write carries the CSRF token in X-CSRFToken.
(function () {
  "use strict";
  const PARALLEL = 3;

  function setup(area) {
    const csrf = area.dataset.csrf;
    const status = area.querySelector("[data-files-status]");
    const form = area.querySelector("[data-upload-form]");

    function say(text, kind) {
      status.textContent = text;
      status.className = "files-status notice " + (kind || "success");
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
    }

    function keys() {
      return Array.from(area.querySelectorAll("[data-files-list] > li")).map(function (li) { return li.dataset.key; });
    }

    function progressRow(file) {
      const li = document.createElement("li");
      const name = document.createElement("span");
      name.className = "upload-name";
      name.textContent = file.name;
      const bar = document.createElement("progress");
      bar.max = 100;
      bar.value = 0;
      bar.setAttribute("aria-label", "Upload of " + file.name);
      const pct = document.createElement("span");
      pct.className = "upload-pct";
      pct.textContent = "0%";
      li.append(name, bar, pct);
      form.querySelector("[data-progress]").append(li);
      return {
        li: li,
        show: function (done) {
          const value = Math.floor(done * 100);
          bar.value = value;
          pct.textContent = value + "%";
        },
        fail: function (text) {
          li.classList.add("failed");
          pct.textContent = text;
        },
      };
    }

    function objectUrl(name) {
      return area.dataset.bucket + "/" + encodeURIComponent(name);
    }

    // One request with upload progress (fetch reports none); resolves with the answer whatever its status.
    function request(method, url, body, onProgress) {
      return new Promise(function (resolve, reject) {
        const xhr = new XMLHttpRequest();
        xhr.open(method, url);
        xhr.setRequestHeader("X-CSRFToken", csrf);
        xhr.setRequestHeader("Accept", "application/json");
        if (body instanceof Blob) {
          xhr.setRequestHeader("Content-Type", "application/octet-stream");
        }
        if (onProgress) {
          xhr.upload.addEventListener("progress", function (event) {
            if (event.lengthComputable) {
              onProgress(event.loaded);
            }
          });
        }
        xhr.addEventListener("load", function () { resolve({status: xhr.status, text: xhr.responseText}); });
        xhr.addEventListener("error", function () { reject(new Error("The connection failed.")); });
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

    // A file in one PUT to the bucket, the way most files go.
    async function sendWhole(file, row) {
      // 100% only once the server has stored it (the last byte sent is not yet a file).
      await ok(await request("PUT", objectUrl(file.name), file, function (sent) {
        row.show(Math.min(sent / Math.max(file.size, 1), 0.99));
      }));
    }

    // A large file in parts (the bucket's multipart upload), several at once; a part that fails is sent again,
    // and an upload cut short (a dropped connection, a closed tab) resumes where it stopped when the same file is
    // chosen again: this browser remembers which upload holds that file (name, size and date of the file).
    function memoryKey(file) {
      return "upload:" + area.dataset.bucket + ":" + file.name.normalize("NFC") + ":" + file.size + ":" + file.lastModified;
    }

    function partSizeFor(size) {
      const wanted = Number(area.dataset.partSize) || 16 * 1024 * 1024;
      return Math.max(wanted, Math.ceil(size / 9000)); // the bucket takes at most 10,000 parts
    }

    async function openUpload(file) {
      const url = objectUrl(file.name);
      const remembered = window.localStorage.getItem(memoryKey(file));
      if (remembered) {
        const listing = await request("GET", url + "?uploadId=" + encodeURIComponent(remembered));
        if (listing.status === 200) {
          return JSON.parse(listing.text); // its parts received and those missing
        }
        window.localStorage.removeItem(memoryKey(file));
      }
      // An upload of this name left by another file, or in another browser, cannot be taken up: its bytes may
      // differ. It is cancelled, or it would hold up publishing.
      for (const stale of await unfinished()) {
        if (stale.key === file.name.normalize("NFC")) {
          await ok(await request("DELETE", url + "?uploadId=" + encodeURIComponent(stale.id)));
        }
      }
      const upload = await ok(await request("POST", url + "?uploads&size=" + file.size + "&partSize=" +
        partSizeFor(file.size)));
      window.localStorage.setItem(memoryKey(file), upload.id);
      const all = [];
      for (let n = 0; n <= upload.last_part_number; n += 1) {
        all.push(n);
      }
      return Object.assign(upload, {parts: [], missing: all});
    }

    async function sendInParts(file, row) {
      const upload = await openUpload(file);
      const url = objectUrl(file.name) + "?uploadId=" + encodeURIComponent(upload.id);
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
          for (let attempt = 1; !failure; attempt += 1) {
            try {
              await ok(await request("PUT", url + "&partNumber=" + n, part, function (done) {
                sent[n] = done;
                show();
              }));
              sent[n] = part.size;
              show();
              break;
            } catch (error) {
              sent[n] = 0;
              // A refusal (a full quota, a published deposition, an expired upload) stays one: only a dropped
              // connection or a server error is worth another try.
              if (attempt >= 3 || (error.status && error.status < 500)) {
                // The other parts stop too: what arrived is kept, and listed as received when it resumes.
                failure = new Error(error.message + " The upload stopped: choose the same file again to go on " +
                  "from where it stopped, or cancel it below.");
                return;
              }
              await new Promise(function (wait) { setTimeout(wait, 1000 * attempt); });
            }
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
      await ok(await request("POST", url));
      window.localStorage.removeItem(memoryKey(file));
    }

    function send(file, row) {
      const from = Number(area.dataset.multipartFrom) || 64 * 1024 * 1024;
      return file.size >= from ? sendInParts(file, row) : sendWhole(file, row);
    }

    // The user's multipart uploads to this bucket that are still open, each with a button that cancels it.
    async function unfinished() {
      const answer = await request("GET", area.dataset.bucket + "?uploads");
      return answer.status === 200 ? JSON.parse(answer.text).uploads : [];
    }

    async function showUnfinished() {
      const box = form.querySelector("[data-unfinished]");
      const open = (await unfinished()).filter(function (u) { return !u.completed; });
      const list = box.querySelector("ul");
      list.replaceChildren();
      open.forEach(function (u) {
        const li = document.createElement("li");
        const text = document.createElement("span");
        text.textContent = u.key + " (" + u.size + " bytes), open until " + u.expires.slice(0, 10) + " ";
        const cancel = document.createElement("button");
        cancel.type = "button";
        cancel.className = "secondary";
        cancel.textContent = "Cancel";
        cancel.setAttribute("aria-label", "Cancel the unfinished upload of " + u.key);
        cancel.addEventListener("click", function () {
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
    async function keepChosenOrder(files, before) {
      const rows = Array.from(area.querySelectorAll("[data-files-list] > li"));
      const chosen = Array.from(files).map(function (f) { return f.name.normalize("NFC"); });
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

    async function upload(files) {
      const before = new Set(keys());
      const taken = new Set(before);
      const queue = Array.from(files);
      const chosenFiles = queue.slice();
      form.querySelector("[data-progress]").replaceChildren(); // the bars of an earlier batch
      const failed = [];
      let done = 0;
      say("Uploading " + queue.length + " file" + (queue.length === 1 ? "" : "s") + "…", "success");
      async function worker() {
        while (queue.length) {
          const file = queue.shift();
          const row = progressRow(file);
          if (taken.has(file.name.normalize("NFC"))) {
            row.fail("not uploaded");
            failed.push("“" + file.name + "” is there already: delete it first to upload another under that name.");
            continue;
          }
          taken.add(file.name.normalize("NFC"));
          try {
            await send(file, row);
            row.show(1);
            done += 1;
          } catch (error) {
            row.fail("not uploaded");
            failed.push("“" + file.name + "” was not uploaded: " + error.message);
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
        await keepChosenOrder(chosenFiles, before);
        await showUnfinished();
      } catch (error) {
        failed.push(error.message);
      }
      const summary = "Uploaded " + done + " file" + (done === 1 ? "" : "s") + ".";
      say(failed.length ? summary + " " + failed.join(" ") : summary, failed.length ? "error" : "success");
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
        upload(input.files).finally(function () { input.value = ""; });
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
        upload(input.files).finally(function () { input.value = ""; });
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
        upload(event.dataTransfer.files);
      }
    });
  }

  document.querySelectorAll("[data-files]").forEach(setup);
})();
