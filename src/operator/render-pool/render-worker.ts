// A render worker thread (see render-pool.ts): runs each job it is given and posts the outcome.
// Compiled bodies stay cached in this thread, so a body is compiled once per worker.
import { parentPort } from 'node:worker_threads';
import { runRenderJob, type RenderJob } from '../../engine/render/render-job.ts';

parentPort?.on('message', (job: RenderJob) => {
  parentPort?.postMessage(runRenderJob(job));
});
parentPort?.postMessage('ready');
