import { expect } from 'chai';
import { project } from '../../src/scim/projection.js';
import type { ScimObject } from '../../src/scim/resource.js';

const user: ScimObject & { schemas: string[]; emails: ScimObject[] } = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  id: 'prn_1',
  userName: 'ann@example.com',
  name: { givenName: 'Ann', familyName: 'Lee' },
  emails: [
    { type: 'work', value: 'ann@example.com', primary: true },
    { type: 'home', value: 'ann@home.example', primary: false },
  ],
};

describe('SCIM attributes and excludedAttributes', () => {
  it('keeps the named attributes, sub-attributes, and always id and schemas', () => {
    expect(project(user, 'userName,name.familyName')).to.deep.equal({
      schemas: user.schemas,
      id: 'prn_1',
      userName: 'ann@example.com',
      name: { familyName: 'Lee' },
    });
  });

  it('reads a name qualified by a value filter as the attribute it qualifies, commas inside the filter included', () => {
    expect(project(user, 'emails[type eq "work"]')).to.deep.equal({
      schemas: user.schemas,
      id: 'prn_1',
      emails: user.emails,
    });
    expect(project(user, 'emails[value eq "a,b"].value, userName')).to.deep.equal({
      schemas: user.schemas,
      id: 'prn_1',
      emails: [{ value: 'ann@example.com' }, { value: 'ann@home.example' }],
      userName: 'ann@example.com',
    });
  });

  it('leaves out excluded attributes but never id or schemas', () => {
    expect(project(user, undefined, 'emails,id,name.givenName')).to.deep.equal({
      schemas: user.schemas,
      id: 'prn_1',
      userName: 'ann@example.com',
      name: { familyName: 'Lee' },
    });
  });
});
