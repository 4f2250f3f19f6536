"""What a healthy run keeps printing: the client's start-up and training progress, workers' and kubelet chatter."""

from __future__ import annotations

import math

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.scenarios import NS, glog_stamp, parse_duration

from .logs import Logs
from .model import Attempt, Ctr, Pod


class Chatter(Logs):
    """Periodic lines of a running job, seeded so every rebuild is the same."""

    def client(self, att: Attempt, head: Pod, cl: Ctr) -> None:
        bg, ms = self.s.background, att.ms
        if not cl.runs:
            return
        t0 = cl.runs[0].start + self.jitter(1, 2.5)
        if "tpu_backend" in bg["noise"]:
            self.cline(head, cl, t0, *sc.NOISE["tpu_backend"])
        if self.w["pathwaysutils"]:
            self.cline(head, cl, t0 + self.jitter(0.3, 0.8), "stderr",
                       "WARNING:absl:pathwaysutils: Detected Pathways-on-Cloud backend. Applying changes.")
        if "compile_cache_off" in bg["noise"]:
            self.cline(head, cl, t0 + self.jitter(0.9, 1.2), *sc.NOISE["compile_cache_off"])
        if "client_connect" not in ms:
            return
        t = ms["client_connect"]
        self.cline(head, cl, t, "stdout", f"System Information: Jax Version: {self.w['jax_version']}")
        self.cline(head, cl, t + 3000, "stdout", f"System Information: Jaxlib Version: {self.w['jax_version']}")
        self.cline(head, cl, t + 6000, "stdout", "System Information: Jax Backend: proxy")
        if "devices" not in ms:
            return
        n = self.w["slices"] * self.w["hosts_per_slice"] * self.w["chips_per_host"]
        self.cline(head, cl, ms["devices"], "stdout",
                   f"Devices: [device(0,TPU_DEVICE,coords=[0,0,0,0],vtask=0,slice=0,default_mem=device,mem_spaces=3),"
                   f" device(1,TPU_DEVICE,coords=[1,0,0,0],vtask=0,slice=0,default_mem=device,mem_spaces=3), ...]"
                   f" ({n} devices)")
        self.cline(head, cl, ms["devices"] + 4000, "stdout", f"Num_devices: {n}, shape (1, 1, {n}, 1, 1, 1, 1, 1)")
        if "cache_key" in bg["noise"]:
            for k in range(3):
                self.cline(head, cl, ms["devices"] + self.jitter(2 + 9 * k, 8 + 9 * k), *sc.NOISE["cache_key"])
        self.progress(att, head, cl)

    def cline(self, pod: Pod, c: Ctr, t: int, stream: str, text: str) -> str:
        if not c.alive(t, 0) or self.ends_before(self.attempts[pod.attempt], t):
            return ""
        return self.clog(pod, c.name, t, text, stream)

    def progress(self, att: Attempt, head: Pod, cl: Ctr) -> None:
        bg = self.s.background
        if bg["progress"] in (None, "none") or "first_step" not in att.ms:
            return
        stream, tmpl = sc.PROGRESS_FORMATS[bg["progress"]]
        stop = min(x for x in (att.progress_stop, att.end, self.s.end, cl.runs[0].end) if x is not None)
        # background.resume: a later attempt restores the last checkpoint an earlier one saved and counts on from it
        first = max((a.last_checkpoint for a in self.attempts[:att.n]), default=0) if bg["resume"] else 0
        att.first_step_no = first
        t, step, every = att.ms["first_step"], first, max(1, int(bg["log_every"]))
        total = bg["steps"] or 100000
        step_ns = bg["step_seconds"] * NS
        ckpt = bg["checkpoint_every"]
        quiet = self.s.start + sc.parse_duration(bg["quiet_after"]) if bg["quiet_after"] else None
        while t < stop and step < total:
            sec = (att.ms["first_step"] - att.ms["devices"]) / NS if step == first else bg["step_seconds"] * self.rng.uniform(0.97, 1.04)
            if step % every == 0 and (quiet is None or t < quiet):  # background.quiet_after: steps on, prints nothing
                loss = 2.05 + 8.6 * math.exp(-step / 350) + self.rng.uniform(-0.03, 0.03)
                text = tmpl.format(step=step, sec=sec, tflops=self.rng.uniform(181, 194) if step != first else 1.2,
                                   tok=self.rng.uniform(5700, 6050) if step != first else 31.4, weights=65536, loss=loss,
                                   ts=glog_stamp(t), tid=cl.tid, gnorm=self.rng.uniform(0.2, 1.4), sps=1 / sec,
                                   total=total, lr=3e-4 * min(1, (step + 1) / 500), ms=sec * 1000)
                self.cline(head, cl, t, stream, text)
            if ckpt and step and step != first and step % ckpt == 0:
                if self.cline(head, cl, t + 2 * NS, "stderr", f"INFO:absl:Saved a checkpoint at step {step}."):
                    att.last_checkpoint = step
            step += 1
            t += int(step_ns * self.rng.uniform(0.97, 1.04)) if step > first + 1 else 0
            if step == first + 1:
                t += int(step_ns)
        if bg["steps"] and step >= total and t < stop:
            run = cl.runs[-1]
            run.end, run.exit_code, run.reason = t + 4 * NS, 0, "Completed"
            self.cline(head, cl, t + 2 * NS, "stdout", f"Training finished after {total} steps.")

    def chatter(self, att: Attempt, head: Pod, rm: Ctr, workers: list[Pod]) -> None:
        every = parse_duration(f"{self.s.background['worker_chatter_minutes']}m")
        stop = min(att.end or self.s.end, self.s.end)
        multi = self.w["slices"] > 1
        templates = sc.WORKER_CHATTER + (sc.WORKER_CHATTER_MULTISLICE if multi else ())
        jit = min(40.0, every / NS / 4)  # +-40s at the default 6m; a quarter period at the seconds rates bench/ uses
        for pod in workers:
            c = pod.ctrs["pathways-worker"]
            k = (pod.ref.slice, pod.ref.vm)
            if f"megascale{k}" not in att.ms:
                continue
            t = att.ms[f"megascale{k}"] + self.jitter(20, 90)
            while t < stop:
                self.line_raw(pod, c, t, self.rng.choice(templates))
                t += every + self.jitter(-jit, jit)
        if "rm_serving" in att.ms:
            t = att.ms["rm_serving"] + self.jitter(120, 300)
            while t < stop:
                self.line_raw(head, rm, t, self.rng.choice(sc.RM_CHATTER))
                t += 2 * every + self.jitter(-min(60.0, 2 * jit), min(60.0, 2 * jit))
        if "kubelet" in self.s.background["noise"]:
            for pod in [head] + workers:
                if pod.scheduled is None:
                    continue
                t = pod.scheduled + self.jitter(200, 400)
                while t < stop:
                    self.node_log(pod.host, t, "kubelet", self.rng.choice(sc.KUBELET_CHATTER).format(
                        ts=glog_stamp(t), tid=2187))
                    t += 10 * 60 * NS + self.jitter(-30, 30)

    def line_raw(self, pod: Pod, c: Ctr, t: int, template: str) -> None:
        if not c.alive(t, 0):
            return
        gib = sc.CHIP_NAMES.get(self.w["accelerator"], ("", 16.0))[1]
        text = template.format(ts=glog_stamp(t), tid=c.tid, hex16=self.hexs(16), mib=self.rng.randrange(3, 900),
                               gib=gib * self.w["chips_per_host"] * self.rng.uniform(0.55, 0.7),
                               chips=self.w["chips_per_host"], n=self.rng.randrange(200, 4000),
                               ms=self.rng.uniform(0.8, 3.5), ms2=self.rng.uniform(6, 19), small=self.rng.randrange(1, 4),
                               scratch=self.w["gcs_scratch"])
        self.clog(pod, c.name, t, text)
