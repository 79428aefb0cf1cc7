import { content, newProject, post } from '../support/api';

describe('arithmetic at the edge of DynamoDB numbers (same answer on every engine)', () => {
  it('rejects an increment past the largest storable magnitude and keeps the value', async () => {
    const project = await newProject();
    await post(project, 'set', { path: 'n', value: 9.5e125 });
    const reply = await post(project, 'increment', { path: 'n', value: 9e125 });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('NUMBER_OUT_OF_RANGE');
    expect(await content(project, 'n')).toBe(9.5e125);
  });

  it('rejects a decrement past the smallest storable negative number', async () => {
    const project = await newProject();
    await post(project, 'set', { path: 'n', value: -9.5e125 });
    const reply = await post(project, 'decrement', { path: 'n', value: 9e125 });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('NUMBER_OUT_OF_RANGE');
    expect(await content(project, 'n')).toBe(-9.5e125);
  });

  it('still adds exactly near the edge when the result fits', async () => {
    const project = await newProject();
    await post(project, 'set', { path: 'n', value: 9.2e125 });
    const reply = await post(project, 'decrement', { path: 'n', value: 1e125 });
    expect(reply.status).toBe(200);
    expect(await content(project, 'n')).toBe(8.2e125);
  });

  it('adds decimals exactly (DynamoDB decimal arithmetic, not binary floating point)', async () => {
    const project = await newProject();
    await post(project, 'increment', { path: 'n', value: 0.1 });
    await post(project, 'increment', { path: 'n', value: 0.2 });
    expect(await content(project, 'n')).toBe(0.3);
  });
});
