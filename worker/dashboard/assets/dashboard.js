// The dashboard's only script: copy buttons, the live job list and job page, players (hls.js,
// dash.js), and the upload. Pages work without it; it adds what needs a browser. No framework,
// no build step.

const REFRESH_MS = 3000;
/** A part that fails on the way (the network, a 5xx) is sent again, alone, up to this many times in all. */
const PART_ATTEMPTS = 3;

function setUpCopyButtons(root) {
  for (const button of root.querySelectorAll("[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.querySelector(button.dataset.copy);
      if (!source) return;
      try {
        await navigator.clipboard.writeText(source.textContent);
        button.textContent = "Copied";
      } catch {
        // No clipboard access (an insecure origin, a denied permission): select it for Ctrl-C instead.
        const range = document.createRange();
        range.selectNodeContents(source);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        button.textContent = "Selected: press Ctrl-C";
      }
    });
  }
}

/**
 * Plays `data-hls-src` with hls.js (or natively in Safari), from its start: a stream still
 * encoding is an EVENT playlist, which a player would otherwise join at its live edge. A
 * thumbnail loads one fragment of the lowest level.
 */
function attachHls(video) {
  if (video.dataset.attached) return;
  video.dataset.attached = "true";
  const src = video.dataset.hlsSrc;
  const thumbnail = video.dataset.thumbnail === "true";
  if (window.Hls?.isSupported()) {
    // No worker: the page's Content-Security-Policy allows scripts from this origin only.
    const hls = new window.Hls({
      enableWorker: false,
      startPosition: 0,
      startLevel: thumbnail ? 0 : -1,
      maxBufferLength: thumbnail ? 2 : 30,
    });
    hls.on(window.Hls.Events.ERROR, (_event, data) => {
      if (data.fatal) video.dataset.error = data.details;
    });
    if (thumbnail) hls.once(window.Hls.Events.FRAG_BUFFERED, () => hls.stopLoad());
    hls.on(window.Hls.Events.MANIFEST_PARSED, (_event, data) => {
      video.dataset.levels = String(data.levels.length);
    });
    hls.loadSource(src);
    hls.attachMedia(video);
    video.hls = hls;
  } else if (video.canPlayType("application/vnd.apple.mpegurl")) {
    video.src = src;
  }
}

/**
 * Plays `data-dash-src` (an MPD) with dash.js, imported from `data-dash-module`, from its start:
 * while the job encodes the MPD is dynamic, and a start time of 0 counts from its
 * availabilityStartTime, where the stream begins.
 */
async function attachDash(video) {
  if (video.dataset.attached) return;
  video.dataset.attached = "true";
  const { MediaPlayer } = await import(video.dataset.dashModule);
  const player = MediaPlayer().create();
  const { events } = MediaPlayer;
  player.on(events.ERROR, (event) => {
    video.dataset.error = String(event.error?.message ?? event.error?.code ?? "error");
  });
  player.on(events.STREAM_INITIALIZED, () => {
    video.dataset.levels = String(player.getRepresentationsByType("video").length);
  });
  // A play asked for while dash.js was loading leaves the element playing with its play event
  // gone before dash.js listened, and dash.js then never refreshes a live MPD: paused again
  // here, the play is dash.js's own.
  const playAsked = !video.paused;
  if (playAsked) video.pause();
  player.initialize(video, video.dataset.dashSrc, playAsked, 0);
  video.dash = player;
}

function attachPlayers(root) {
  root.querySelectorAll("video[data-hls-src]").forEach(attachHls);
  root.querySelectorAll("video[data-dash-src]").forEach(attachDash);
}

/** Stops a player that leaves the page, so it fetches nothing more. */
function stopPlayer(video) {
  video.hls?.destroy();
  video.dash?.destroy();
}

/**
 * Puts the fresh list in place, keeping every row whose job did not change (its player keeps
 * playing, its thumbnail is not fetched again); the players of rows that went are stopped.
 */
function applyJobs(box, fresh) {
  const kept = new Map([...box.querySelectorAll("tr[data-job-id]")].map((row) => [row.dataset.jobId, row]));
  for (const row of fresh.querySelectorAll("tr[data-job-id]")) {
    const old = kept.get(row.dataset.jobId);
    if (old && old.textContent === row.textContent && old.dataset.status === row.dataset.status) {
      row.replaceWith(old);
      kept.delete(row.dataset.jobId);
    }
  }
  for (const gone of kept.values()) {
    for (const video of gone.querySelectorAll("video")) stopPlayer(video);
  }
  box.replaceWith(fresh);
  attachPlayers(document);
}

/** While a listed job is queued or processing, the list is fetched again every few seconds. */
function refreshJobs() {
  const box = document.getElementById("jobs");
  if (box?.dataset.active !== "true") return;
  setTimeout(async () => {
    try {
      const res = await fetch(box.dataset.refresh, { credentials: "same-origin", headers: { Accept: "text/html" } });
      // Redirected means the session ended: the page itself will say so.
      if (res.redirected) return location.reload();
      if (res.ok) {
        const template = document.createElement("template");
        template.innerHTML = await res.text();
        applyJobs(box, template.content.firstElementChild);
      }
    } catch {
      // Offline for a moment: try again at the next tick.
    }
    refreshJobs();
  }, REFRESH_MS);
}

/**
 * Puts the job's fresh details in place. A media element taken out of the document starts over
 * (its stream torn down), so a player that is playing stays where it is, and only the parts
 * around it (`data-part`) are replaced: a stream plays on through the job's end. A page without
 * a player takes the fresh panel whole, as the stream begins or the output is made.
 */
function applyJob(panel, fresh) {
  const player = panel.querySelector("#player");
  if (player && fresh.querySelector("#player")) {
    for (const part of fresh.querySelectorAll("[data-part]")) {
      panel.querySelector(`[data-part="${part.dataset.part}"]`)?.replaceWith(part);
      setUpCopyButtons(part);
    }
    return;
  }
  if (player) stopPlayer(player);
  panel.replaceWith(fresh);
  attachPlayers(fresh);
  setUpCopyButtons(fresh);
}

/** A job page follows its job until it settles, its details fetched again every few seconds. */
function refreshJob() {
  const panel = document.getElementById("job-panel");
  if (panel?.querySelector("#job")?.dataset.active !== "true") return;
  setTimeout(async () => {
    try {
      const res = await fetch(panel.dataset.refresh, { credentials: "same-origin", headers: { Accept: "text/html" } });
      // Redirected means the session ended: the page itself will say so.
      if (res.redirected) return location.reload();
      if (res.ok) {
        const template = document.createElement("template");
        template.innerHTML = await res.text();
        applyJob(panel, template.content.firstElementChild);
      }
    } catch {
      // Offline for a moment: try again at the next tick.
    }
    refreshJob();
  }, REFRESH_MS);
}

/** A request of the upload's, answered in JSON; `onProgress` hears the bytes sent so far. */
function send(method, url, token, body, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.responseType = "json";
    xhr.setRequestHeader("Accept", "application/json");
    // A form body carries the token itself; a part's bytes cannot.
    if (method === "PUT") xhr.setRequestHeader("X-CSRF-Token", token);
    if (onProgress) xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () => {
      if (xhr.status < 300) return resolve(xhr.response);
      const body = xhr.response ?? {};
      const details = body.details?.map((d) => `${d.field} ${d.message}`).join("; ");
      reject(Object.assign(new Error(details || body.message || `Refused (${xhr.status}).`), { status: xhr.status }));
    };
    xhr.onerror = () => reject(new Error("The connection failed."));
    xhr.send(body);
  });
}

/**
 * The upload page: the file dropped or picked goes to the Worker part by part, each part sent
 * again alone if it fails on the way, then is completed; the encode form then points at it.
 */
function setUpUpload() {
  const box = document.getElementById("upload");
  if (!box) return;
  const form = document.getElementById("encode-form");
  const encode = document.getElementById("encode");
  const zone = document.getElementById("drop-zone");
  const input = document.getElementById("file-input");
  const status = document.getElementById("upload-status");
  const bar = document.getElementById("upload-progress");
  const percent = document.getElementById("upload-percent");
  const token = form.elements._csrf.value;
  const base = box.dataset.uploads;
  let busy = false;

  const show = (fraction) => {
    bar.value = Math.floor(fraction * 100);
    percent.textContent = `${bar.value}%`;
  };
  const say = (text, kind) => {
    status.textContent = text;
    status.className = kind ? `notice ${kind}` : "";
  };
  const formOf = (fields) => new URLSearchParams({ _csrf: token, ...fields });

  async function sendPart(url, bytes, onProgress) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await send("PUT", url, token, bytes, onProgress);
      } catch (err) {
        if (attempt >= PART_ATTEMPTS || (err.status && err.status < 500)) throw err;
        await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      }
    }
  }

  async function upload(file) {
    if (!file || busy) return;
    busy = true;
    encode.disabled = true;
    bar.parentElement.hidden = false;
    show(0);
    say(`Uploading ${file.name}…`);
    try {
      const fields = { filename: file.name, size: String(file.size), contentType: file.type };
      const created = await send("POST", base, token, formOf(fields));
      let sent = 0;
      for (const part of created.parts) {
        const bytes = file.slice(sent, sent + part.size);
        const url = `${base}/${created.id}/parts/${part.partNumber}`;
        await sendPart(url, bytes, (loaded) => show((sent + loaded) / file.size));
        sent += part.size;
      }
      await send("POST", `${base}/${created.id}/complete`, token, formOf({}));
      show(1);
      form.action = form.dataset.action.replace(":id", created.id);
      encode.disabled = false;
      say(`${file.name} is uploaded. Choose a preset, then Encode.`, "ok");
    } catch (err) {
      say(`${file.name} was not uploaded: ${err.message}`, "error");
    } finally {
      busy = false;
    }
  }

  input.addEventListener("change", () => upload(input.files[0]));
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    upload(event.dataTransfer.files[0]);
  });
  // One job per click: the button stays off once the form is on its way.
  form.addEventListener("submit", () => {
    encode.disabled = true;
  });
}

setUpCopyButtons(document);
setUpUpload();
attachPlayers(document);
refreshJobs();
refreshJob();
