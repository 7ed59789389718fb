import { startOpenAiServer, completion, httpError } from './test/fixtures/openai-server.ts';
const s = await startOpenAiServer((body) => {
  const m = String(body.model);
  if (m === 'huge') return { json: completion({ model: m, content: 'x'.repeat(200_000) }) };
  if (m === 'down') return httpError(503);
  if (m === 'null') return { json: completion({ model: m, content: null }) };
  if (m === 'arr') return { json: completion({ model: m, content: '[1,2,3]' }) };
  if (m === 'cut') return { raw: '{"id":"x","choices":[{"mess', status: 200 };
  return { json: completion({ model: m, content: JSON.stringify({ reason: 'r', patch: [{ op: 'replace', path: '/user_scenario/persona', value: 'x'.repeat(10) }] }) }) };
});
console.log(s.url);
await new Promise((r) => setTimeout(r, 600_000));
