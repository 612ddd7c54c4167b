import { extendedResourceProblem, objectNameProblem } from './kubernetes.ts';
import { byPriority, isAssigned, numericViolations, yamlViolations } from './profile.ts';

describe('profile rules', () => {
  test('role assignment: off admits everyone; on admits holders of a listed role; an empty list nobody', () => {
    expect(isAssigned({ assignedOidcRolesEnabled: false, assignedOidcRoles: [] }, [])).toBe(true);
    expect(isAssigned({ assignedOidcRolesEnabled: true, assignedOidcRoles: ['a', 'b'] }, ['b'])).toBe(true);
    expect(isAssigned({ assignedOidcRolesEnabled: true, assignedOidcRoles: ['a'] }, ['c'])).toBe(false);
    expect(isAssigned({ assignedOidcRolesEnabled: true, assignedOidcRoles: [] }, ['a'])).toBe(false);
  });

  test('orders by priority, lower first, then by name', () => {
    const profiles = [
      { priority: 2, name: 'a' },
      { priority: 1, name: 'z' },
      { priority: 1, name: 'b' },
    ];
    expect(profiles.sort(byPriority).map((p) => p.name)).toEqual(['b', 'z', 'a']);
  });

  test('a numeric constraint is required, consistent, and not below its lowest minimum', () => {
    expect(numericViolations('p', { field: 'cpu_constraint', value: undefined, lowest: 1n })).toEqual([
      { field: 'p.cpu_constraint', description: 'is required' },
    ]);
    expect(
      numericViolations('p', { field: 'cpu_constraint', value: { min: '0', default: '0' }, lowest: 1n }),
    ).toEqual([{ field: 'p.cpu_constraint.min', description: 'must be at least 1, got 0' }]);
    expect(
      numericViolations('p', {
        field: 'memory_bytes_constraint',
        value: { min: '1', default: '5', cumulativeMax: '4' },
        lowest: 1n,
      }).map((v) => v.field),
    ).toEqual(['p.memory_bytes_constraint.cumulative_max']);
  });

  test('pod templates must be YAML mappings and tolerations YAML lists of mappings', () => {
    expect(yamlViolations('f', '', 'mapping')).toEqual([]);
    expect(yamlViolations('f', 'spec:\n  hostNetwork: false\n', 'mapping')).toEqual([]);
    expect(yamlViolations('f', '- a\n', 'mapping')[0]?.description).toContain('mapping');
    expect(yamlViolations('f', 'a: [', 'mapping')[0]?.description).toContain('not valid YAML');
    expect(yamlViolations('f', '- key: k\n  operator: Exists\n', 'sequence')).toEqual([]);
    expect(yamlViolations('f', '- just-a-string\n', 'sequence')[0]?.description).toContain('list');
  });

  test('names Kubernetes will see are checked as Kubernetes does', () => {
    expect(extendedResourceProblem('nvidia.com/gpu')).toBeUndefined();
    expect(extendedResourceProblem('gpu')).toContain('extended resource');
    expect(extendedResourceProblem('kubernetes.io/gpu')).toContain('extended resource');
    expect(objectNameProblem('fast-ssd')).toBeUndefined();
    expect(objectNameProblem('Fast SSD')).toContain('Kubernetes object name');
  });
});
