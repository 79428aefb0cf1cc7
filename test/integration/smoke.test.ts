import { call, content, newProject, post } from '../support/api';

describe('content routes end to end', () => {
  it('sets a value and reads it back with an ETag', async () => {
    const project = await newProject();
    const set = await post(project, 'set', { path: 'data.item.name', value: 'x' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ message: 'Value set successfully' });
    expect(set.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    const got = await call('GET', project.content, { token: project.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ value: { data: { item: { name: 'x' } } } });
    expect(got.headers.get('etag')).toBe(set.headers.get('etag'));
    expect(await content(project, 'data.item')).toEqual({ name: 'x' });
  });
});
