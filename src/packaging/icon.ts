// The operator's icon for OperatorHub and the OLM console: a database cylinder with a seedling (SampleDB grows from a
// small spec). Square, plain SVG, no external references.
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
  <rect width="64" height="64" rx="12" fill="#1f4e79"/>
  <ellipse cx="32" cy="18" rx="18" ry="6" fill="#9fc5e8"/>
  <path d="M14 18v26c0 3.3 8 6 18 6s18-2.7 18-6V18c0 3.3-8 6-18 6s-18-2.7-18-6z" fill="#6fa8dc"/>
  <path d="M14 31c0 3.3 8 6 18 6s18-2.7 18-6" fill="none" stroke="#1f4e79" stroke-width="2"/>
  <path d="M32 44V34" stroke="#38761d" stroke-width="3" stroke-linecap="round"/>
  <path d="M32 36c-6 0-8-4-8-7 5 0 8 3 8 7zM32 34c5 0 8-3 8-7-5 0-8 3-8 7z" fill="#6aa84f"/>
</svg>
`;
