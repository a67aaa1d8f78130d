/**
 * Issue 25, case 2, on the real binary against the fake agent: "on disk since before the JVM
 * started" never wins over bytes known to have changed, and covers a file first seen only when
 * nothing shows that it arrived at its path later. A ctime says when an inode changed, not when
 * it arrived at its path: a folder swapped in and a symbolic link re-pointed bring old files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { buildCommand, type Project } from '../support/project.js';
import { sleep, waitFor } from '../support/wait.js';
import { classFile, expectNotLive, failing, run, script, useProjects, WATCHER } from '../support/evidence.js';
import { writeClass } from '../support/cli.js';

const projectWithAgent = useProjects();

/** A staging folder written before the app started: the project's classes, with Greeter's bytes `greeter-staged`. */
function stage(p: Project): string {
  const staging = path.join(p.dir, 'staging');
  writeClass(staging, 'com.acme.Greeter', 'greeter-staged');
  writeClass(staging, 'com.acme.Outer', 'outer-v1');
  writeClass(staging, 'com.acme.Outer$Inner', 'inner-v1');
  return staging;
}

/** Greeter's class file made a symbolic link to a copy of its bytes, and an older file with other bytes, both before the app started. */
function linked(p: Project): { link: string; older: string } {
  const link = classFile(p, 'com.acme.Greeter');
  const older = writeClass(path.join(p.dir, 'older'), 'Greeter', 'greeter-older');
  const current = writeClass(path.join(p.dir, 'current'), 'Greeter', 'greeter-v1');
  fs.rmSync(link);
  fs.symlinkSync(current, link);
  return { link, older };
}

/** The swap: the class output directory removed and the staging folder renamed in its place. */
const swap = (p: Project, staging: string) =>
  `fs.rmSync(${JSON.stringify(p.classes)}, { recursive: true }); fs.renameSync(${JSON.stringify(staging)}, ${JSON.stringify(p.classes)});`;
/** The link pointed at the older file. */
const repoint = (link: string, older: string) =>
  `fs.rmSync(${JSON.stringify(link)}); fs.symlinkSync(${JSON.stringify(older)}, ${JSON.stringify(link)});`;

describe('a build that brings old files to a path: the bytes there changed, so they are asked', () => {
  it('a folder swapped in (rm -rf out && mv staging out), staging written before the app started', async () => {
    let staging = '';
    const { p } = await projectWithAgent(failing('greeter-staged'), (project) => (staging = stage(project)));
    const swapped = await run(p, script(swap(p, staging)));
    expectNotLive(swapped, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });

  it("a class file's symbolic link pointed at an older file", async () => {
    let files = { link: '', older: '' };
    const { p } = await projectWithAgent(failing('greeter-older'), (project) => (files = linked(project)));
    const repointed = await run(p, script(repoint(files.link, files.older)));
    expectNotLive(repointed, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });
});

describe('old files brought to a path after the app started, before the first run: no start-time evidence', () => {
  it('a folder swapped in by hand: its files are asked, and the failed reload the swap caused is shown', async () => {
    let staging = '';
    const { p, agent } = await projectWithAgent({ ...WATCHER, ...failing('greeter-staged') }, (project) => (staging = stage(project)));
    fs.rmSync(p.classes, { recursive: true });
    fs.renameSync(staging, p.classes);
    await waitFor(() => agent.captures >= 1, "the agent's watcher to take the swapped folder");
    await sleep(100); // its reload (20 ms) has failed
    const first = await run(p, buildCommand(p));
    expectNotLive(first, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });

  it('a symbolic link re-pointed by hand: its file is asked, and the failed reload is shown', async () => {
    let files = { link: '', older: '' };
    const { p, agent } = await projectWithAgent({ ...WATCHER, ...failing('greeter-older') }, (project) => (files = linked(project)));
    fs.rmSync(files.link);
    fs.symlinkSync(files.older, files.link);
    await waitFor(() => agent.captures >= 1, "the agent's watcher to take the re-pointed link");
    await sleep(100);
    const first = await run(p, buildCommand(p));
    expectNotLive(first, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });
});
